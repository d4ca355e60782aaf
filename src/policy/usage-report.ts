import type { RouteContext } from '../http/route.js';
import { mergeUsage, type IRStreamEvent, type IRUsage } from '../protocols/ir.js';
import type { ModelEntry } from '../routing/catalog.js';

export interface UsageBase {
  context: RouteContext;
  endpoint: string;
  model: ModelEntry;
  /** ms since epoch when the request reached the pipeline. */
  started: number;
}

/** Fires the `onUsage` hook once; a failing hook is logged, never surfaced to the client. */
export function reportUsage(base: UsageBase, usage: IRUsage, status: 'ok' | 'error'): void {
  const { options, requestId, key } = base.context;
  const hook = options.hooks.onUsage;
  if (!hook) return;
  const event = {
    requestId,
    keyId: key.id,
    model: base.model.id,
    upstreamModel: base.model.upstreamModel ?? base.model.id,
    provider: base.model.provider,
    endpoint: base.endpoint,
    usage,
    status,
    latencyMs: Date.now() - base.started,
  };
  Promise.resolve()
    .then(() => hook(event))
    .catch((error: unknown) => options.logger.error('onUsage hook failed', { requestId, message: String(error) }));
}

/**
 * Passes a stream's events through unchanged while keeping its usage, and reports it once the
 * stream ends: completed, failed, or cut by the client (charged for what was produced).
 */
export async function* tapStreamUsage(events: AsyncIterable<IRStreamEvent>, base: UsageBase): AsyncGenerator<IRStreamEvent> {
  let usage: IRUsage = {};
  let finished = false;
  try {
    for await (const event of events) {
      if (event.type === 'start' || event.type === 'usage' || event.type === 'finish') usage = mergeUsage(usage, event.usage);
      if (event.type === 'finish') finished = true;
      yield event;
    }
  } finally {
    reportUsage(base, usage, finished ? 'ok' : 'error');
  }
}
