import { isRecord, type Json } from '../../json.js';
import type { Provider } from '../../providers/provider.js';
import type { GuardrailChecker, GuardrailFinding, TextVerdict } from '../checker.js';
import type { GuardrailSpecOf } from '../guardrail-schema.js';
import { callService, guardrailName, malformed, NOTHING_FOUND, nonEmptyPositions } from './remote-check.js';

const SERVICE = 'Bedrock guardrail';

/**
 * The `bedrock-guardrail` guardrail: the texts of one check as the content items of one
 * ApplyGuardrail call (`source` INPUT or OUTPUT by phase; empty texts are not sent) through
 * `provider`'s signed `applyGuardrail`. From the assessments:
 * - PII entities and regex matches are found back in the texts (every occurrence of the `match`
 *   Bedrock quotes) as spans, category the entity type or regex name in lower case, which a `mask`
 *   guardrail replaces; one found in no text is flagged instead (it cannot be masked, so it blocks);
 * - denied topics, content filters, words and contextual grounding are flagged (topic name, filter
 *   type, `profanity` or `custom_word`, `grounding` or `relevance`, in lower case).
 * Bedrock does not say which content item a flag came from: flags go on the first text sent.
 * An entry counts when `detected` (a guardrail in detect mode acts `NONE` but detects), or, from
 * a Bedrock that does not send `detected`, when its action is not `NONE`. An intervention with
 * no entry read (a policy this adapter does not know) is flagged `guardrail_intervened`.
 * Throws a `TypeError` naming `provider` when the provider cannot apply guardrails.
 */
export function bedrockGuardrailChecker(spec: GuardrailSpecOf<'bedrock-guardrail'>, provider: Provider): GuardrailChecker {
  const name = guardrailName(spec);
  const apply = provider.moderation?.applyGuardrail?.bind(provider.moderation);
  if (!apply) {
    throw new TypeError(`guardrail "${name}": provider "${spec.provider}" (${provider.type}) cannot apply Bedrock guardrails; a "bedrock" provider can`);
  }

  return {
    canMask: true,
    async check(texts, context) {
      const positions = nonEmptyPositions(texts);
      if (positions.length === 0) return texts.map(() => NOTHING_FOUND);
      const sent = positions.map((at) => texts[at]!);
      const answer = await callService(name, SERVICE, context.signal, () =>
        apply(
          {
            guardrailIdentifier: spec.guardrailIdentifier,
            guardrailVersion: spec.guardrailVersion,
            source: context.phase === 'input' ? 'INPUT' : 'OUTPUT',
            content: sent.map((text) => ({ text: { text } })),
          },
          { signal: context.signal, requestId: context.requestId },
        ),
      );
      if (!isRecord(answer) || (answer.action !== 'NONE' && answer.action !== 'GUARDRAIL_INTERVENED') || !Array.isArray(answer.assessments)) {
        throw malformed(name, SERVICE, 'without an action and assessments');
      }
      const { matches, flags } = readAssessments(answer.assessments, () => malformed(name, SERVICE, 'an assessment that is not an object'));
      if (answer.action === 'GUARDRAIL_INTERVENED' && matches.size === 0 && flags.size === 0) flags.add('guardrail_intervened');

      const findings = findBack(sent, matches.values(), flags);
      const verdicts: TextVerdict[] = texts.map(() => NOTHING_FOUND);
      positions.forEach((at, index) => {
        const flagged = index === 0 && flags.size ? { flagged: [...flags] } : {};
        if (findings[index]!.length || flagged.flagged) verdicts[at] = { findings: findings[index]!, ...flagged };
      });
      return verdicts;
    },
  };
}

/** A value Bedrock found (a PII entity, a regex match), to find back in the texts. */
interface Match {
  category: string;
  match: string;
}

/** What the assessments found: values to find back in the texts, and whole-text categories. */
function readAssessments(assessments: unknown[], bad: () => Error): { matches: Map<string, Match>; flags: Set<string> } {
  const matches = new Map<string, Match>();
  const flags = new Set<string>();
  for (const assessment of assessments) {
    if (!isRecord(assessment)) throw bad();
    for (const topic of entries(assessment.topicPolicy, 'topics')) flags.add(lower(topic.name, 'topic'));
    for (const filter of entries(assessment.contentPolicy, 'filters')) flags.add(lower(filter.type, 'content'));
    for (const _word of entries(assessment.wordPolicy, 'customWords')) flags.add('custom_word');
    for (const word of entries(assessment.wordPolicy, 'managedWordLists')) flags.add(lower(word.type, 'profanity'));
    for (const filter of entries(assessment.contextualGroundingPolicy, 'filters')) flags.add(lower(filter.type, 'grounding'));
    const sensitive = assessment.sensitiveInformationPolicy;
    for (const entity of entries(sensitive, 'piiEntities')) addMatch(matches, flags, lower(entity.type, 'pii'), entity.match);
    for (const regex of entries(sensitive, 'regexes')) addMatch(matches, flags, lower(regex.name, 'regex'), regex.match);
  }
  return { matches, flags };
}

/** The entries of `policy[list]` that count (see `bedrockGuardrailChecker`). */
function entries(policy: unknown, list: string): Json[] {
  const items = isRecord(policy) ? policy[list] : undefined;
  if (!Array.isArray(items)) return [];
  return items.filter(
    (item): item is Json =>
      isRecord(item) && (item.detected === true || (item.detected === undefined && typeof item.action === 'string' && item.action !== 'NONE')),
  );
}

/** A value to find back, once per category (Bedrock lists a value once per occurrence). */
function addMatch(matches: Map<string, Match>, flags: Set<string>, category: string, match: unknown): void {
  if (typeof match !== 'string' || match === '') flags.add(category);
  else matches.set(`${category}\u0000${match}`, { category, match });
}

function lower(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value.toLowerCase() : fallback;
}

/** Each text's spans of every occurrence of the matches; a match found in no text is flagged instead. */
function findBack(texts: readonly string[], matches: Iterable<Match>, flags: Set<string>): GuardrailFinding[][] {
  const findings: GuardrailFinding[][] = texts.map(() => []);
  for (const { category, match } of matches) {
    let found = false;
    texts.forEach((text, index) => {
      for (const start of occurrences(text, match)) {
        findings[index]!.push({ category, start, end: start + match.length });
        found = true;
      }
    });
    if (!found) flags.add(category);
  }
  return findings;
}

/** Start offsets of every occurrence of `value` in `text`, not overlapping. */
function occurrences(text: string, value: string): number[] {
  const starts: number[] = [];
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + value.length)) starts.push(at);
  return starts;
}
