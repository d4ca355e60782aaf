import type { RouteContext } from '../http/route.js';
import { isGatewayError } from '../errors.js';
import type { ModelEntry, ModelKind } from '../routing/model.js';
import { admitRequest } from './admission.js';
import { RequestLedger } from './request-ledger.js';

/** What a ledger accounts for: the public model, the route's endpoint, the kind of call and whether it streams. */
export interface LedgerSubject {
  model: ModelEntry;
  endpoint: string;
  kind: ModelKind;
  stream: boolean;
}

/**
 * Admits the request for the model (`admitRequest`), opens its ledger and runs `run` with it.
 * Whatever `run` throws settles the ledger failed (499 when the client left) and carries the
 * ledger's headers (`x-ratelimit-*`, `x-infergate-route`) onto a `GatewayError`, so every
 * generation, media call and compaction ends the same way.
 */
export async function withLedger<T>(context: RouteContext, subject: LedgerSubject, run: (ledger: RequestLedger) => Promise<T>): Promise<T> {
  const ledger = new RequestLedger(context, subject.model, subject.endpoint, subject.kind, subject.stream, await admitRequest(context, subject.model));
  try {
    return await run(ledger);
  } catch (error) {
    const cancelled = context.signal.aborted;
    ledger.finish({ status: 'error', error, cancelled, ...(cancelled ? { httpStatus: 499 } : {}) });
    if (isGatewayError(error)) Object.assign(error.headers, ledger.headers);
    throw error;
  }
}
