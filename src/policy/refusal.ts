import type { RouteContext } from '../http/route.js';
import { runObserver } from '../plugins/run-observer.js';
import { AdmissionRefusal } from './admission-refusal.js';
import type { RefusalEvent } from './events.js';

/** Tells the plugins' `onRefused` stage of a refusal (anything else thrown is not one); never throws. */
export function reportRefusal(context: RouteContext, error: unknown): void {
  if (!(error instanceof AdmissionRefusal)) return;
  const { options, requestId, key } = context;
  const event: RefusalEvent = { requestId, keyId: key.id, reason: error.reason, status: error.status, code: error.code };
  for (const plugin of options.plugins) {
    if (plugin.onRefused) void runObserver(options.logger, 'onRefused observer', requestId, () => plugin.onRefused!(event));
  }
}
