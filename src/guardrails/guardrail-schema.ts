import * as v from 'valibot';
import { flag, headers, positiveInteger, strictObject, text, urlText } from '../config-fields.js';
import { isSafePattern } from './safe-pattern.js';

/**
 * A guardrail as the config file, `createGateway`'s `policies.guardrails`, a model's and a key's
 * `guardrails` (and so the admin API) write it. docs/policies.md, "Guardrails", describes each.
 */

const common = {
  /** Names the guardrail in outcomes and errors; a later list's guardrail of the same name replaces it. Default: `type`. */
  name: v.optional(text),
  /** What a finding does: refuse (default), replace it with `[REDACTED:<category>]`, or only report it. */
  action: v.optional(v.picklist(['block', 'mask', 'monitor'], 'expected "block", "mask" or "monitor"')),
  /** Which side it checks: the prompt, the answer, or both (default). */
  phase: v.optional(v.picklist(['input', 'output', 'both'], 'expected "input", "output" or "both"')),
  /** Longest wait for a remote check, in ms (default 2,000); past it the check failed. */
  timeoutMs: v.optional(positiveInteger),
  /** A check that fails or times out passes the text (reported `failed_open`); default false: refused. */
  failOpen: v.optional(flag),
  /** Characters of a streamed answer a remote check sees at once (cut at a sentence end when one is near). Default 1,000. */
  window: v.optional(positiveInteger),
};

const categories = v.optional(v.array(text, 'expected an array of category names'));
const scoreThreshold = v.optional(v.pipe(v.number('expected a number'), v.minValue(0, 'expected a number >= 0'), v.maxValue(1, 'expected a number <= 1')));

export const RegexPatternSchema = strictObject({
  /** Reported (and put in the mask) when the pattern matches. */
  category: text,
  /** A JavaScript regular expression; one with nested quantifiers (exponential backtracking) is refused. */
  pattern: v.pipe(text, v.check(isSafePattern, 'expected a valid regular expression without nested quantifiers (exponential backtracking)')),
  flags: v.optional(v.pipe(v.string('expected a string'), v.regex(/^[imsu]*$/, 'expected flags among "i", "m", "s", "u"'))),
});

export const GuardrailSchema = v.variant(
  'type',
  [
    strictObject({ type: v.literal('secrets'), ...common, categories }),
    strictObject({ type: v.literal('pii'), ...common, categories }),
    strictObject({
      type: v.literal('regex'),
      ...common,
      patterns: v.pipe(v.array(RegexPatternSchema, 'expected an array of { "category", "pattern" }'), v.minLength(1, 'expected at least one pattern')),
      /** Longest text one pattern may match, in characters: a stream holds back this many. Default 256. */
      maxLength: v.optional(positiveInteger),
    }),
    strictObject({
      type: v.literal('openai-moderation'),
      ...common,
      /** A configured provider whose API has `/v1/moderations` (OpenAI, or compatible). */
      provider: text,
      model: v.optional(text),
      /** Only these categories count; default: whatever the endpoint flags. */
      categories,
      /** Count a category whose score is at least this, instead of the endpoint's own `flagged`. */
      scoreThreshold,
    }),
    strictObject({
      type: v.literal('bedrock-guardrail'),
      ...common,
      /** A configured `bedrock` provider: its region and credentials sign the call. */
      provider: text,
      guardrailIdentifier: text,
      guardrailVersion: text,
    }),
    strictObject({
      type: v.literal('presidio'),
      ...common,
      /** The analyzer's base URL; the gateway calls `POST {analyzerUrl}/analyze`. */
      analyzerUrl: urlText,
      headers: v.optional(headers),
      language: v.optional(text),
      entities: v.optional(v.array(text, 'expected an array of entity names')),
      scoreThreshold,
    }),
  ],
  'expected a guardrail with "type": "secrets", "pii", "regex", "openai-moderation", "bedrock-guardrail" or "presidio"',
);

export const GuardrailListSchema = v.array(GuardrailSchema, 'expected an array of guardrails');

export type GuardrailSpec = v.InferOutput<typeof GuardrailSchema>;
export type GuardrailSpecOf<T extends GuardrailSpec['type']> = Extract<GuardrailSpec, { type: T }>;
