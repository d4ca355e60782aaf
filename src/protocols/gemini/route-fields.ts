import { invalidRequest } from '../../errors.js';
import { checkedModelId } from '../../routing/model-id.js';

/**
 * What a Gemini request says in its URL: the model (`models/{model}:generateContent`; a client
 * that puts the `models/` prefix in the name as well gets it dropped) and, for
 * `:streamGenerateContent`, streaming. Google streams a JSON array unless asked for `alt=sse`;
 * this gateway streams Server-Sent Events only, so a stream must ask for them.
 */
export function generateFields(params: Record<string, string>): Record<string, unknown> {
  return { model: modelOfUrl(params), stream: false };
}

export function streamFields(params: Record<string, string>, url: URL): Record<string, unknown> {
  const alt = url.searchParams.get('alt');
  if (alt !== 'sse') {
    throw invalidRequest(
      `streamGenerateContent is served as Server-Sent Events only: add '?alt=sse' to the URL (got ${alt === null ? "no 'alt'" : `alt=${alt}`}).`,
      'alt',
      'unsupported_value',
    );
  }
  return { model: modelOfUrl(params), stream: true };
}

/** The model a Gemini URL names (`models/{model}:…`), or a 400 naming `model` for one that cannot be an id. */
export function modelOfUrl(params: Record<string, string>): string {
  return checkedModelId(modelOfPath(params.model ?? ''));
}

export function modelOfPath(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}
