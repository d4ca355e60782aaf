import { checkAuth, openAIErrorBody } from './fake-openai.js';
import { counter, isObject, Rejection, startFake, type FakeProtocol, type FakeUpstream, type RecordedRequest } from './fake-server.js';

type Json = Record<string, any>;

/** Words that make the fake flag a text, as a real moderation model would flag such content. */
export const MODERATION_MARKERS = {
  /** Flags `violence` (score 0.91). */
  violence: 'VIOLENCE-MARKER',
  /** Flags `harassment` (score 0.88). */
  harassment: 'HARASSMENT-MARKER',
  /** Scores `violence` 0.45 without flagging it: only a `scoreThreshold` at or below counts it. */
  borderline: 'BORDERLINE-MARKER',
} as const;

/** The categories of the omni models; the older text models lack the `illicit` pair. */
const OMNI_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
];
const TEXT_CATEGORIES = OMNI_CATEGORIES.filter((category) => !category.startsWith('illicit'));

/** Model ids the endpoint takes, and the snapshot each answers as. */
const MODELS: Record<string, string> = {
  'omni-moderation-latest': 'omni-moderation-2024-09-26',
  'omni-moderation-2024-09-26': 'omni-moderation-2024-09-26',
  'text-moderation-latest': 'text-moderation-007',
  'text-moderation-stable': 'text-moderation-007',
};

export interface FakeModerationOptions {
  /** The Bearer key it accepts. Default `up-key`. */
  apiKey?: string;
}

/**
 * A fake OpenAI `POST /v1/moderations`, written from OpenAI's API reference and as strict: the
 * Bearer key, JSON, only `input` and `model`, a known model, `input` a string, an array of
 * strings or an array of `text` / `image_url` parts (images on omni models only). Each input gets
 * a result with every category of the model, its score and its input types; `MODERATION_MARKERS`
 * decide what is flagged. Scripted replies make it hang (`{ hang: true }`), fail (`{ error }`) or
 * answer something else (`{ raw }`); requests are recorded.
 */
export async function startFakeModeration(options: FakeModerationOptions = {}): Promise<FakeUpstream> {
  return startFake(moderationProtocol(options.apiKey ?? 'up-key'));
}

function moderationProtocol(apiKey: string): FakeProtocol {
  const id = counter('modr-fake');
  return {
    validate(request: RecordedRequest): string {
      if (request.method !== 'POST' || request.path !== '/v1/moderations') {
        throw new Rejection(404, `Invalid URL (${request.method} ${request.path})`, { type: 'invalid_request_error' });
      }
      checkAuth(request, apiKey);
      if (!(request.headers['content-type'] ?? '').startsWith('application/json')) throw invalid('Content-Type must be application/json.');
      const body = request.body;
      if (!isObject(body)) throw invalid('We could not parse the JSON body of your request.');
      const unknown = Object.keys(body).find((field) => field !== 'input' && field !== 'model');
      if (unknown) throw invalid(`Unrecognized request argument supplied: ${unknown}`);
      if (body.model !== undefined && (typeof body.model !== 'string' || !MODELS[body.model])) {
        throw new Rejection(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, {
          type: 'invalid_request_error',
          code: 'model_not_found',
        });
      }
      if (body.input === undefined) throw invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
      const model = body.model ?? 'omni-moderation-latest';
      if (!inputsOf(body.input, model.startsWith('omni-'))) {
        throw invalid("'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input');
      }
      return 'moderations';
    },

    render(_endpoint, body) {
      const model = MODELS[body.model ?? 'omni-moderation-latest']!;
      const categories = model.startsWith('omni-') ? OMNI_CATEGORIES : TEXT_CATEGORIES;
      const results = inputsOf(body.input, true)!.map((text) => resultOf(text, categories));
      return { status: 200, headers: { 'content-type': 'application/json' }, json: { id: id(), model, results } };
    },

    streamErrorFrames: () => [],

    errorResponse(status, message, fields, extra) {
      return {
        status,
        headers: { 'content-type': 'application/json', ...extra },
        json: openAIErrorBody(status, message, fields),
      };
    },
  };
}

/** The texts of a valid `input` (an image part counts as an empty text), or undefined when OpenAI refuses it. */
function inputsOf(input: unknown, images: boolean): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((item) => typeof item === 'string')) return input as string[];
  const texts: string[] = [];
  for (const part of input as unknown[]) {
    if (isObject(part) && part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (images && isObject(part) && part.type === 'image_url' && isObject(part.image_url) && typeof part.image_url.url === 'string') texts.push('');
    else return undefined;
  }
  return texts;
}

function resultOf(text: string, categories: readonly string[]): Json {
  const scores: Record<string, number> = Object.fromEntries(categories.map((category) => [category, 0.00012]));
  if (text.includes(MODERATION_MARKERS.borderline)) scores.violence = 0.45;
  if (text.includes(MODERATION_MARKERS.violence)) scores.violence = 0.91;
  if (text.includes(MODERATION_MARKERS.harassment)) scores.harassment = 0.88;
  return {
    flagged: categories.some((category) => scores[category]! >= 0.5),
    categories: Object.fromEntries(categories.map((category) => [category, scores[category]! >= 0.5])),
    category_scores: scores,
    category_applied_input_types: Object.fromEntries(categories.map((category) => [category, ['text']])),
  };
}

function invalid(message: string, param: string | null = null, code: string | null = null): Rejection {
  return new Rejection(400, message, { type: 'invalid_request_error', param, code });
}
