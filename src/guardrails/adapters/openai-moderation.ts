import { isRecord } from '../../json.js';
import type { Provider } from '../../providers/provider.js';
import type { GuardrailChecker, TextVerdict } from '../checker.js';
import type { GuardrailSpecOf } from '../guardrail-schema.js';
import { callService, flaggedVerdict, guardrailName, malformed, NOTHING_FOUND, nonEmptyPositions } from './remote-check.js';

const DEFAULT_MODEL = 'omni-moderation-latest';
const SERVICE = 'moderation endpoint';

/**
 * The `openai-moderation` guardrail: the texts of one check in one `POST /moderations` call
 * (`input` an array; empty texts are not sent) through `provider`'s moderation capability, its
 * key and connections. A text's verdict flags the categories its result marks `true`, or whose
 * `category_scores` reach `scoreThreshold` when set, limited to `categories` when set. Whole-text
 * flags only: it cannot mask. Throws a `TypeError` naming `provider` when the provider has no
 * moderation endpoint.
 */
export function openAIModerationChecker(spec: GuardrailSpecOf<'openai-moderation'>, provider: Provider): GuardrailChecker {
  const name = guardrailName(spec);
  const moderate = provider.moderation?.moderate?.bind(provider.moderation);
  if (!moderate) {
    throw new TypeError(`guardrail "${name}": provider "${spec.provider}" (${provider.type}) has no moderation endpoint; an "openai" provider has one`);
  }
  const model = spec.model ?? DEFAULT_MODEL;
  const only = spec.categories ? new Set(spec.categories) : undefined;
  const threshold = spec.scoreThreshold;

  /** The categories one result counts. */
  const flaggedIn = (result: unknown, at: number): string[] => {
    const marks = isRecord(result) ? (threshold === undefined ? result.categories : result.category_scores) : undefined;
    if (!isRecord(marks)) throw malformed(name, SERVICE, `a result without ${threshold === undefined ? 'categories' : 'category_scores'} at results[${at}]`);
    const found: string[] = [];
    for (const [category, mark] of Object.entries(marks)) {
      if (only && !only.has(category)) continue;
      if (threshold === undefined ? mark === true : typeof mark === 'number' && mark >= threshold) found.push(category);
    }
    return found;
  };

  return {
    canMask: false,
    async check(texts, context) {
      const positions = nonEmptyPositions(texts);
      const verdicts: TextVerdict[] = texts.map(() => NOTHING_FOUND);
      if (positions.length === 0) return verdicts;
      const input = positions.map((at) => texts[at]!);
      const answer = await callService(name, SERVICE, context.signal, () =>
        moderate({ model, input }, { signal: context.signal, requestId: context.requestId }),
      );
      const results = isRecord(answer) ? answer.results : undefined;
      if (!Array.isArray(results) || results.length !== input.length) {
        throw malformed(name, SERVICE, `${Array.isArray(results) ? results.length : 'no'} results for ${input.length} inputs`);
      }
      positions.forEach((at, index) => {
        verdicts[at] = flaggedVerdict(flaggedIn(results[index], index));
      });
      return verdicts;
    },
  };
}
