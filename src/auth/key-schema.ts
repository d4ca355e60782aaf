import * as v from 'valibot';
import { flag, nonNegativeNumber, strictObject, text } from '../config-fields.js';
import { KeyBudgetSchema } from '../policy/budget-schema.js';
import { GuardrailListSchema } from '../guardrails/guardrail-schema.js';
import { McpPatternsSchema } from '../mcp/mcp-schema.js';

/**
 * The fields of a key that both the config file's `keys` and the admin API (`POST`/`PATCH
 * /admin/keys`) set, so the two accept exactly the same values. Each message says what was
 * expected; the caller adds the path.
 */

/** A key's limits (`KeyLimits`), and the default ones of `policies.limits`. */
export const KeyLimitsSchema = strictObject({
  requestsPerMinute: v.optional(nonNegativeNumber),
  tokensPerMinute: v.optional(nonNegativeNumber),
  concurrentRequests: v.optional(nonNegativeNumber),
  quota: v.optional(nonNegativeNumber),
});

export const keySettingFields = {
  models: v.union([v.literal('*'), v.array(text)], 'expected "*" or an array of model ids'),
  group: text,
  disabled: flag,
  // valibot's record takes an array (as `{ "0": … }`).
  metadata: v.pipe(
    v.custom<unknown>((value) => !Array.isArray(value), 'expected an object'),
    v.record(v.string(), v.unknown(), 'expected an object'),
  ),
  limits: KeyLimitsSchema,
  budget: KeyBudgetSchema,
  guardrails: GuardrailListSchema,
  mcp: McpPatternsSchema,
};
