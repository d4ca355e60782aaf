import type { RouteContext } from '../http/route.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import type { ModelEntry } from '../routing/model.js';
import { modelOnDeployment, type Deployment } from '../routing/deployments.js';
import { speaksNatively } from '../providers/speaks-natively.js';
import { itemReferenceRefused } from '../protocols/responses/index.js';
import { checkReferencesOwned, continueConversation, isItemReference, recordResponses, storedItemsOf, type CompletedResponse } from '../state/conversation.js';
import type { StoredResponse } from '../state/response-store.js';

/** A Responses request and how to keep its answer, when the gateway keeps anything of it. */
export interface Conversation {
  /** The body with `previous_response_id` replaced by the whole history in `input`. */
  body: Record<string, unknown>;
  /**
   * Records the answer: the whole conversation once completed, on a model that keeps state; or,
   * when a Responses upstream stored it itself, only where it lives and which output items it
   * produced, as soon as the ledger learns its id (the passthrough tap reads both from the same
   * event or body anyway, so nothing more is parsed).
   */
  record(response: Response, ledger: RequestLedger): Response | Promise<Response>;
}

/**
 * Conversation state for a Responses request; undefined when nothing is kept (no response store,
 * or `store: false` on a model that keeps no state).
 * - On a model with `previousResponseId`, the body is expanded from the store and the completed
 *   answer stored whole (unless `store: false`), whichever upstream answers.
 * - On other models, an upstream that speaks Responses and answers on passthrough keeps the
 *   response itself (`store` defaults to true); the gateway records only which key owns the id,
 *   which deployment holds it and the ids of its output items, so `GET`/`DELETE
 *   /v1/responses/{id}` reach it for that key and its `item_reference`s pass (`checkReferences`).
 */
export async function conversationOf(context: RouteContext, model: ModelEntry, body: Record<string, unknown>): Promise<Conversation | undefined> {
  const store = context.options.responseStore;
  if (!model.previousResponseId) {
    await checkReferences(context, model, body);
    if (!store || body.store === false) return undefined;
    return {
      body,
      record: async (response, ledger) => {
        const deployment = ledger.answeredBy;
        // A JSON answer's id is known already: it waits here for the write; a stream's is held
        // at its terminal frame until the write is done (`identifiedWrites`).
        if (storesUpstream(context, model, deployment))
          await ledger.whenIdentified((id, itemIds) => put(context, locatorOf(context, model, deployment, id, itemIds)));
        return response;
      },
    };
  }
  if (!store) return undefined;
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
 * The body a count of input tokens or a compaction continues from: `previous_response_id` and
 * `item_reference`s expanded from the store on a model that keeps state; elsewhere the body as
 * it is, its references checked (`checkReferences`).
 */
export async function expandedConversation(context: RouteContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const store = context.options.responseStore;
  const model = context.options.catalog.get(String(body.model));
  if (!model) return body;
  if (!model.previousResponseId) {
    await checkReferences(context, model, body);
    return body;
  }
  if (!store) return body;
  return (await continueConversation(store, context.key.id, body)).body;
}

/**
 * On a model that keeps no state, `item_reference`s (and bare `{ id }`s) go upstream as they are,
 * where the upstream resolves them in the operator's account whichever key made them: so only on
 * a model with a deployment that stores what it answers, and only ids this key's responses there
 * produced (another key's id is the 404 of an unknown one). Elsewhere a reference is a 400, as
 * no upstream could resolve it (a translating deployment refuses it in its decoder too).
 */
async function checkReferences(context: RouteContext, model: ModelEntry, body: Record<string, unknown>): Promise<void> {
  const input = body.input;
  if (!Array.isArray(input)) return;
  const first = input.findIndex(isItemReference);
  if (first < 0) return;
  const store = context.options.responseStore;
  const stores = context.options.catalog.deployments(model).some((deployment) => storesUpstream(context, model, deployment));
  if (!store || !stores) throw itemReferenceRefused(`input[${first}]`);
  await checkReferencesOwned(store, context.key.id, input);
}

/** Whether the deployment answers Responses on passthrough, so the upstream keeps what it answered. */
function storesUpstream(context: RouteContext, model: ModelEntry, deployment: Deployment): boolean {
  const provider = context.options.providers[deployment.provider];
  return Boolean(provider?.text?.storedResponse) && speaksNatively(provider, modelOnDeployment(model, deployment), 'responses');
}

/**
 * The record of a response its upstream keeps: its key, where it lives and, as `items`, a
 * reference for each of its output items, so the store's `getItems` finds them for this key
 * only (and a model that keeps state hands such a reference on as it is).
 */
function locatorOf(context: RouteContext, model: ModelEntry, deployment: Deployment, id: string, itemIds: readonly string[]): StoredResponse {
  return {
    id,
    keyId: context.key.id,
    model: model.id,
    items: itemIds.map((itemId) => ({ type: 'item_reference', id: itemId })),
    createdAt: Date.now(),
    upstream: { provider: deployment.provider, deployment: deployment.id },
  };
}

/** Stores what `toRecord` makes of the completed answer. */
function recordWith(context: RouteContext, response: Response, toRecord: (completed: CompletedResponse) => StoredResponse): Promise<Response> {
  return recordResponses(response, (completed) => put(context, toRecord(completed)));
}

/** A failed write is logged, never the client's problem (a Redis store's writes are bounded by its timeout). */
function put(context: RouteContext, record: StoredResponse): Promise<void> {
  const { responseStore: store, logger } = context.options;
  return store!
    .put(record)
    .catch((error: unknown) =>
      logger.error('response store write failed', { requestId: context.requestId, message: error instanceof Error ? error.message : String(error) }),
    );
}
