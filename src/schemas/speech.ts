import * as v from 'valibot';
import { looseObj, model, nonEmptyStr, num, obj, oneOf, str } from './common.js';

/**
 * Voice ids of the form `<language>_<gender>_<name>_<variant>` (spec 2.10):
 * - language: 2 to 8 lowercase letters (ISO 639 codes, or `multi` for multilingual voices),
 *   optionally with BCP 47 subtags (`en-GB`, `zh-Hans`);
 * - gender: lowercase letters (`female`, `male`, …), not a closed list;
 * - name: letters and digits (`anna`, `yunxi`, `M392`);
 * - variant: letters and digits, possibly several `_`-joined segments: real catalog ids such as
 *   `zh_female_cancan_mars_bigtts` put the engine and version there.
 * So at least four non-empty segments; `alloy`, `en_female` or `en__anna_v1` are rejected.
 */
export const VOICE_PATTERN = /^[a-z]{2,8}(?:-[A-Za-z0-9]{2,8})*_[a-z]+_[A-Za-z0-9]+_[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*$/;

export const VOICE_FORMAT = 'a voice id of the form <language>_<gender>_<name>_<variant> (e.g. en_female_anna_v1)';

export const SPEECH_FORMATS = ['mp3', 'wav', 'opus'] as const;

/** Longest `input`, in characters, for every provider: OpenAI's own limit (about five minutes of speech). */
export const MAX_SPEECH_INPUT_CHARS = 4096;
const INPUT_EXPECTED = `a non-empty string of at most ${MAX_SPEECH_INPUT_CHARS} characters (the text to synthesize)`;

/** `POST /v1/audio/speech` (spec 2.10). */
export const speechRequestSchema = looseObj(
  {
    model: model(),
    input: v.pipe(nonEmptyStr(INPUT_EXPECTED), v.maxLength(MAX_SPEECH_INPUT_CHARS, INPUT_EXPECTED)),
    voice: v.pipe(v.string(VOICE_FORMAT), v.regex(VOICE_PATTERN, VOICE_FORMAT)),
    instructions: v.optional(str()),
    response_format: v.optional(oneOf(SPEECH_FORMATS)),
    speed: v.optional(num({ min: 0.5, max: 2 }, (n) => n.toFixed(1))),
    stream_format: v.optional(str()),
    metadata: v.optional(obj()),
  },
  'a JSON object',
);

export type SpeechRequest = v.InferOutput<typeof speechRequestSchema>;
