import { conversationOf } from '../conversation-state.js';
import type { PipelineStage } from './turn.js';

/**
 * Conversation state (Responses): `previous_response_id` expanded from the store before the
 * other stages see the body, and the answer recorded once it completes (`conversation-state.ts`).
 */
export const conversationStage: PipelineStage = async (turn, next) => {
  if (!turn.codec.storesConversations) return next();
  const conversation = await conversationOf(turn.context, turn.model, turn.body);
  if (!conversation) return next();
  turn.setBody(conversation.body);
  return conversation.record(await next(), turn.ledger);
};
