import { GatewayError } from '../errors.js';
import type { ModelEntry } from '../routing/model.js';

/**
 * The model's rules that apply before a generation on `/v1/responses`: the spec's (section 7),
 * then `checkStateReferences`.
 */
export function checkModelRules(model: ModelEntry, body: Record<string, unknown>): void {
  if (body.service_tier === 'auto' && !model.serviceTierAuto) {
    throw new GatewayError({
      status: 400,
      message: `The model \`${model.id}\` does not support service_tier "auto"; omit it or name a tier.`,
      param: 'service_tier',
      code: 'unsupported_value',
    });
  }
  checkStateReferences(model, body);
}

/**
 * The rules that keep references to stored state inside the gateway's key scoping, on every route
 * that takes a Responses body (`/v1/responses`, `/compact`, `/input_tokens`). An upstream resolves
 * `previous_response_id`, `conversation` and `item_reference` ids in the operator's account,
 * whichever gateway key made them, so none reaches it unchecked: `previous_response_id` only on
 * models whose state the gateway keeps (expanded from its store, per key), `conversation` only
 * where the operator allows it; `item_reference`s are checked against the store once the
 * conversation is read (`checkReferences`, `conversation-state.ts`).
 */
export function checkStateReferences(model: ModelEntry, body: Record<string, unknown>): void {
  if (body.previous_response_id != null && !model.previousResponseId) {
    throw new GatewayError({
      status: 400,
      message: `The model \`${model.id}\` does not support previous_response_id; send the conversation in \`input\` instead.`,
      param: 'previous_response_id',
      code: 'unsupported_parameter',
    });
  }
  if (body.conversation != null && !model.upstreamConversations) {
    throw new GatewayError({
      status: 400,
      message: `The model \`${model.id}\` does not take \`conversation\`: send the conversation in \`input\` instead.`,
      param: 'conversation',
      code: 'unsupported_parameter',
    });
  }
}
