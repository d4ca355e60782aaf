import type { UsageStore } from '../state/usage-store.js';
import { utcDayCache } from '../state/usage-store.js';
import type { GatewayPlugin } from './plugin.js';

/**
 * Adds every usage event to the usage store, under its key, the UTC day the request started and
 * its public model: `GET /v1/usage` reads these back. A failed write is logged by the gateway
 * (as any observer's) and never touches the answer.
 */
export function usageRecorder(store: UsageStore): GatewayPlugin {
  const dayOf = utcDayCache();
  return {
    onUsage(event) {
      return store.add(event.keyId, dayOf(event.startedAt), event.model, {
        requests: 1,
        inputTokens: event.usage.input ?? 0,
        outputTokens: event.usage.output ?? 0,
        costUsd: event.costUsd,
      });
    },
  };
}
