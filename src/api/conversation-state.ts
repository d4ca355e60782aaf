import type { RouteContext } from '../http/route.js';
import type { ModelEntry } from '../routing/catalog.js';
import { continueConversation, recordResponses, storedItemsOf } from '../state/conversation.js';

/** A Responses request on a model that keeps state: its expanded body, and how to keep its answer. */
export interface Conversation {
  /** The body with `previous_response_id` replaced by the whole history in `input`. */
  body: Record<string, unknown>;
  /** Watches the answer and stores it once completed (unless the client sent `store: false`). */
  record(response: Response): Response;
}

/**
 * Conversation state for a Responses request, when the model accepts `previous_response_id`
 * and a response store is configured; undefined otherwise (the body goes on as it is).
 */
export async function conversationOf(context: RouteContext, model: ModelEntry, body: Record<string, unknown>): Promise<Conversation | undefined> {
  const store = context.options.responseStore;
  if (!store || !model.previousResponseId) return undefined;
  const { body: expanded, history } = await continueConversation(store, context.key.id, body);
  if (body.store === false) return { body: expanded, record: (response) => response };
  const { logger } = context.options;
  return {
    body: expanded,
    record: (response) =>
      recordResponses(response, (completed) => {
        store
          .put({ id: completed.id, keyId: context.key.id, model: model.id, items: storedItemsOf(history, completed.output), createdAt: Date.now() })
          .catch((error: unknown) => logger.error('response store write failed', { requestId: context.requestId, message: error instanceof Error ? error.message : String(error) }));
      }),
  };
}
