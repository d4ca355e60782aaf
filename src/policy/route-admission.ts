import { isGatewayError } from '../errors.js';
import { addHeaders } from '../http/add-headers.js';
import type { EarlyAdmission, RouteAdmission, RouteContext } from '../http/route.js';
import { admitKey, admitRequestsOnly } from './admission.js';
import type { Admission } from './limit-engine.js';
import { reportRefusal } from './refusal.js';

/**
 * An admission taken before the route's handler ran, held until the request's ledger takes it
 * (`claim`, through `admitRequest`), or else given back by the gateway: at once when the request
 * fails before that (a malformed body, an unknown model), when the answer's body ends for a
 * route without a ledger. A request refused after admission still counts as a request per minute.
 */
export class HeldAdmission implements EarlyAdmission {
  private claimed = false;
  private released = false;

  private constructor(
    private readonly context: RouteContext,
    readonly admission: Admission,
  ) {}

  /** Admits the route's request for the key, before its body: a refusal is the route's 429. */
  static async take(context: RouteContext, scope: RouteAdmission): Promise<HeldAdmission> {
    try {
      const admission = scope === 'requests' ? await admitRequestsOnly(context) : await admitKey(context, { kind: scope });
      return new HeldAdmission(context, admission);
    } catch (error) {
      reportRefusal(context, error);
      throw error;
    }
  }

  get waiting(): boolean {
    return !this.claimed && !this.released;
  }

  claim(): Admission {
    this.claimed = true;
    return this.admission;
  }

  /**
   * Runs the route's handler within the admission: a failure before a ledger took it gives it
   * back and carries its `x-ratelimit-*` headers; an answer without a ledger gets them too, and
   * gives the admission back once its body has been sent (or the client left).
   */
  async run(handler: () => Promise<Response>): Promise<Response> {
    let response: Response;
    try {
      response = await handler();
    } catch (error) {
      if (!this.claimed) {
        this.release();
        if (isGatewayError(error)) Object.assign(error.headers, { ...this.admission.headers, ...error.headers });
      }
      throw error;
    }
    if (this.claimed) return response;
    response = addHeaders(response, this.admission.headers);
    if (!this.admission.slot || !response.body) {
      this.release();
      return response;
    }
    this.context.signal.addEventListener('abort', () => this.release(), { once: true });
    return new Response(
      releasedAtEnd(response.body, () => this.release()),
      response,
    );
  }

  /** Gives back the concurrency slot; counts no tokens and no spend. */
  private release(): void {
    if (this.released || this.claimed) return;
    this.released = true;
    const { admission, context } = this;
    if (!admission.counted || !admission.slot) return;
    const { options, key, requestId } = context;
    Promise.resolve()
      .then(() => options.policies.limitEngine.settle(key.id, admission.limits, { slot: admission.slot, tokens: 0, cost: 0 }, Date.now()))
      .catch((error: unknown) =>
        options.logger.error('limit settlement failed', { requestId, message: error instanceof Error ? error.message : String(error) }),
      );
  }
}

/** The body as it is, calling `release` once it has ended, failed or been cancelled. */
function releasedAtEnd(body: ReadableStream<Uint8Array>, release: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (!done) return controller.enqueue(value);
          release();
          controller.close();
        } catch (error) {
          release();
          controller.error(error);
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
