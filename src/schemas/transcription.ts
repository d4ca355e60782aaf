import * as v from 'valibot';
import { GatewayError } from '../errors.js';
import { parseJson } from '../json.js';
import { int, looseObj, model, num, oneOf, str } from './common.js';
import { boolField } from './image-edit.js';
import { issueToError } from './validate.js';

export const TRANSCRIPTION_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt', 'diarized_json'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** A decimal number written as multipart text (`"0.2"`), converted and range-checked. */
function numberField(range: { min: number; max: number }) {
  const expected = `a number from ${range.min} to ${range.max}`;
  return v.pipe(
    v.string(expected),
    v.regex(/^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i, expected),
    v.transform(Number),
    v.minValue(range.min, expected),
    v.maxValue(range.max, expected),
  );
}

/** OpenAI's `server_vad` chunking: the type, and numbers the upstream tunes its voice detection with. */
const vadSchema = looseObj(
  {
    type: oneOf(['server_vad']),
    prefix_padding_ms: v.optional(int({ min: 0 })),
    silence_duration_ms: v.optional(int({ min: 0 })),
    threshold: v.optional(num({ min: 0, max: 1 })),
  },
  "'auto' or an object with type 'server_vad'",
);

/**
 * The text fields of `POST /v1/audio/transcriptions` as `collectTranscriptionFields` gathers
 * them: single fields as strings (numbers and booleans converted here), the repeated fields
 * (`timestamp_granularities[]`, `include[]`) as arrays, `chunking_strategy` as `'auto'` or an
 * object. Unknown fields are kept as they came.
 */
export const transcriptionFieldsSchema = looseObj(
  {
    model: model(),
    language: v.optional(
      v.pipe(str('an ISO-639-1 language code (e.g. en)'), v.regex(/^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/, 'an ISO-639-1 language code (e.g. en)')),
    ),
    prompt: v.optional(str()),
    response_format: v.optional(oneOf(TRANSCRIPTION_FORMATS)),
    temperature: v.optional(numberField({ min: 0, max: 1 })),
    stream: v.optional(boolField()),
    timestamp_granularities: v.optional(v.array(oneOf(['word', 'segment']), 'a list of granularities')),
    include: v.optional(v.array(oneOf(['logprobs']), 'a list of fields to include')),
    // Chosen by the input's type, so a bad threshold is named as such (a union would only say "neither").
    chunking_strategy: v.optional(v.lazy((input) => (typeof input === 'string' ? v.literal('auto', "'auto' or an object with type 'server_vad'") : vadSchema))),
  },
  'a multipart form',
);

export type TranscriptionFields = v.InferOutput<typeof transcriptionFieldsSchema>;

/** The form fields that may repeat, by the names clients send them under. */
const LISTS: Record<string, 'timestamp_granularities' | 'include'> = {
  'timestamp_granularities[]': 'timestamp_granularities',
  timestamp_granularities: 'timestamp_granularities',
  'include[]': 'include',
  include: 'include',
};

/**
 * The form's text fields as one object to validate. The OpenAI SDKs send a list as repeated
 * `name[]` fields and an object as `name[key]` fields (`chunking_strategy[type]=server_vad`);
 * curl users write `chunking_strategy=auto` or its JSON. Numbers inside `chunking_strategy[…]`
 * are read as numbers.
 */
export function collectTranscriptionFields(entries: readonly (readonly [string, string])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of entries) {
    const list = Object.hasOwn(LISTS, name) ? LISTS[name] : undefined;
    if (list) {
      ((out[list] ??= []) as string[]).push(value);
      continue;
    }
    const key = /^chunking_strategy\[([^\]]+)\]$/.exec(name)?.[1];
    if (key !== undefined) {
      const strategy = typeof out.chunking_strategy === 'object' && out.chunking_strategy !== null ? out.chunking_strategy : {};
      out.chunking_strategy = { ...strategy, [key]: /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value };
      continue;
    }
    out[name] = name === 'chunking_strategy' ? chunkingText(value) : value;
  }
  return out;
}

/** `auto`, or the JSON of a strategy object; anything else is left for the schema to name. */
function chunkingText(value: string): unknown {
  return value.trim().startsWith('{') ? (parseJson(value) ?? value) : value;
}

/** Validates the fields and the rules between them OpenAI applies. */
export function validateTranscriptionFields(entries: readonly (readonly [string, string])[]): TranscriptionFields {
  const result = v.safeParse(transcriptionFieldsSchema, collectTranscriptionFields(entries), { abortEarly: true });
  if (!result.success) throw issueToError(result.issues[0]);
  const fields = result.output;
  const format = fields.response_format ?? 'json';
  if (fields.timestamp_granularities?.length && format !== 'verbose_json') {
    throw invalid('timestamp_granularities', `timestamps come with response_format 'verbose_json' only, received response_format '${format}'.`);
  }
  if (fields.include?.length && format !== 'json') {
    throw invalid('include', `logprobs come with response_format 'json' only, received response_format '${format}'.`);
  }
  return fields;
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_value', param, message: `Invalid value for '${param}': ${message}` });
}

/** A file part of the request, as the multipart parser describes it. */
export interface TranscriptionFile {
  field: string;
  filename?: string;
  size: number;
}

/** The one `file` part: present, not empty, not sent twice. */
export function checkTranscriptionFile<F extends TranscriptionFile>(files: readonly F[]): F {
  const audio = files.filter((file) => file.field === 'file');
  if (audio.length === 0) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_required_parameter',
      param: 'file',
      message: "Missing required parameter: 'file'. Upload the audio as a file part named 'file'.",
    });
  }
  if (audio.length > 1) throw invalid('file', `expected one audio file, received ${audio.length}.`);
  if (audio[0]!.size === 0) throw invalid('file', 'expected a non-empty audio file, received an empty file.');
  return audio[0]!;
}
