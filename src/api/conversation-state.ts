import type { RouteContext } from '../http/route.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import type { ModelEntry } from '../routing/model.js';
import type { Deployment } from '../routing/deployments.js';
import { continueConversation, recordResponses, storedItemsOf, type CompletedResponse } from '../state/conversation.js';
import type { StoredResponse } from '../state/response-store.js';

/** A Responses request and how to keep its answer, when the gateway keeps anything of it. */
export interface Conversation {
  /** The body with `previous_response_id` replaced by the whole history in `input`. */
  body: Record<string, unknown>;
  /**
   * Records the answer: the whole conversation once completed, on a model that keeps state; or,
   * when a Responses upstream stored it itself, only where it lives, as soon as the ledger learns
   * its id (the passthrough tap reads it anyway, so nothing more is parsed).
   */
  record(response: Response, ledger: RequestLedger): Response;
}

/**
 * Conversation state for a Responses request; undefined when nothing is kept (no response store,
 * or `store: false` on a model that keeps no state).
 * - On a model with `previousResponseId`, the body is expanded from the store and the completed
 *   answer stored whole (unless `store: false`), whichever upstream answers.
 * - On other models, an upstream that speaks Responses and answers on passthrough keeps the
 *   response itself (`store` defaults to true); the gateway records only which key owns the id
 *   and which deployment holds it, so `GET`/`DELETE /v1/responses/{id}` reach it for that key.
 */
export async function conversationOf(context: RouteContext, model: ModelEntry, body: Record<string, unknown>): Promise<Conversation | undefined> {
  const store = context.options.responseStore;
  if (!store) return undefined;
  if (!model.previousResponseId) {
    if (body.store === false) return undefined;
    return {
      body,
      record: (response, ledger) => {
        const deployment = ledger.answeredBy;
        if (storesUpstream(context, deployment)) ledger.whenIdentified((id) => put(context, locatorOf(context, model, deployment, id)));
        return response;
      },
    };
  }
  const { body: expanded, history } = await continueConversation(store, context.key.id, body);
  if (body.store === false) return { body: expanded, record: (response) => response };
  return {
    body: expanded,
    record: (response) =>
      recordWith(context, response, (completed) => {
        const { output: _output, ...rest } = completed.response;
        return {
          id: completed.id,
          keyId: context.key.id,
          model: model.id,
          items: storedItemsOf(history, completed.output),
          createdAt: Date.now(),
          response: rest,
          outputCount: storedItemsOf([], completed.output).length,
        };
      }),
  };
}

/**
 * The body a count of input tokens continues from: `previous_response_id` and `item_reference`s
 * expanded from the store on a model that keeps state; the body as it is otherwise.
 */
export async function expandedConversation(context: RouteContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const store = context.options.responseStore;
  const model = context.options.catalog.get(String(body.model));
  if (!store || !model?.previousResponseId) return body;
  return (await continueConversation(store, context.key.id, body)).body;
}

/** Whether the deployment answers Responses on passthrough, so the upstream keeps what it answered. */
function storesUpstream(context: RouteContext, deployment: Deployment): boolean {
  const provider = context.options.providers[deployment.provider];
  return Boolean(provider?.text?.passthrough && provider.text.nativeProtocols?.includes('responses') && provider.text.storedResponse);
}

function locatorOf(context: RouteContext, model: ModelEntry, deployment: Deployment, id: string): StoredResponse {
  return {
    id,
    keyId: context.key.id,
    model: model.id,
    items: [],
    createdAt: Date.now(),
    upstream: { provider: deployment.provider, deployment: deployment.id },
  };
}

/** Stores what `toRecord` makes of the completed answer. */
function recordWith(context: RouteContext, response: Response, toRecord: (completed: CompletedResponse) => StoredResponse): Response {
  return recordResponses(response, (completed) => put(context, toRecord(completed)));
}

/** A failed write is logged, never the client's problem. */
function put(context: RouteContext, record: StoredResponse): void {
  const { responseStore: store, logger } = context.options;
  store!
    .put(record)
    .catch((error: unknown) =>
      logger.error('response store write failed', { requestId: context.requestId, message: error instanceof Error ? error.message : String(error) }),
    );
}
