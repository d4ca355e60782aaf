import { GatewayError } from '../errors.js';
import type { ModelEntry } from '../routing/model.js';

/** The model's provider has no implementation of this media call. */
export function mediaUnavailable(model: ModelEntry, what: string): GatewayError {
  return new GatewayError({
    status: 501,
    type: 'not_implemented',
    message: `${what} is not available for the model \`${model.id}\` (provider \`${model.provider}\`).`,
    code: 'not_implemented',
  });
}
