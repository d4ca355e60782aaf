import { invalidRequest, type GatewayError } from '../errors.js';
import type { ModelEntry } from '../routing/model.js';
import type { EmbeddingInput } from '../schemas/embeddings.js';

/** The inputs of an embedding request, one per vector: texts, or token arrays. */
export function embeddingInputs(input: EmbeddingInput): (string | number[])[] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as string[] | number[][];
}

/** The inputs as texts, for an upstream that takes no token ids: a token array is a 400 naming `input`. */
export function textInputs(input: EmbeddingInput, model: ModelEntry): string[] {
  const inputs = embeddingInputs(input);
  if (inputs.some((item) => typeof item !== 'string')) {
    throw invalidRequest(
      `The model \`${model.id}\` embeds text only: send \`input\` as a string or an array of strings, not token ids.`,
      'input',
      'invalid_value',
    );
  }
  return inputs as string[];
}

/** The 400 of a provider whose upstream cannot shorten its vectors. */
export function dimensionsUnsupported(model: ModelEntry): GatewayError {
  return invalidRequest(`The model \`${model.id}\` does not support \`dimensions\`: its vectors have a fixed length.`, 'dimensions', 'invalid_value');
}
