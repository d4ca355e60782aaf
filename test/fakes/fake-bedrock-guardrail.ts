import { isObject, Rejection } from './fake-server.js';

type Json = Record<string, any>;

/** The guardrail the fake Bedrock knows, by id (or its ARN) and the versions it has. */
export const FAKE_GUARDRAIL = {
  identifier: 'gr0fake1abcd',
  arn: 'arn:aws:bedrock:us-east-1:123456789012:guardrail/gr0fake1abcd',
  versions: ['1', 'DRAFT'],
} as const;

/**
 * What the fake guardrail detects, as a guardrail configured with these policies would:
 * - PII `EMAIL` (anonymized), `US_SOCIAL_SECURITY_NUMBER` (blocked), `PHONE` `+1-555-…` (detect mode: action `NONE`);
 * - the regex `employee_id` (`EMP-` and six digits, anonymized);
 * - the denied topic `Investment Advice` (a text that mentions investment advice);
 * - the content filter `VIOLENCE` (a text with `VIOLENCE-MARKER`), the custom word `frobnicate`.
 */
export const GUARDRAIL_PLANTS = { topic: 'investment advice', violence: 'VIOLENCE-MARKER', word: 'frobnicate' } as const;

const ID_PATTERN = /^(([a-z0-9]+)|(arn:aws(-[^:]+)?:bedrock:[a-z0-9-]{1,20}:[0-9]{12}:guardrail\/[a-z0-9]+))$/;
const VERSION_PATTERN = /^(([1-9][0-9]{0,7})|(DRAFT))$/;
const QUALIFIERS = new Set(['grounding_source', 'query', 'guard_content']);
const BLOCKED_MESSAGE = 'Sorry, the model cannot answer this question.';

const PII: { type: string; pattern: RegExp; action: 'ANONYMIZED' | 'BLOCKED' | 'NONE' }[] = [
  { type: 'EMAIL', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, action: 'ANONYMIZED' },
  { type: 'US_SOCIAL_SECURITY_NUMBER', pattern: /\b\d{3}-\d{2}-\d{4}\b/g, action: 'BLOCKED' },
  { type: 'PHONE', pattern: /\+1-555-\d{3}-\d{4}/g, action: 'NONE' },
];
const REGEXES = [{ name: 'employee_id', regex: 'EMP-\\d{6}', pattern: /EMP-\d{6}/g, action: 'ANONYMIZED' as const }];

/**
 * Checks an ApplyGuardrail request as Bedrock does (AWS's API reference): the id and version
 * patterns in the path, a guardrail that exists, a body of `source` (INPUT or OUTPUT), `content`
 * (non-empty, each block exactly one of `text` or `image`, qualifiers from the list) and an
 * optional `outputScope`. Throws the `Rejection` Bedrock answers.
 */
export function checkApplyGuardrail(identifier: string, version: string, body: unknown): void {
  if (!ID_PATTERN.test(identifier) || !VERSION_PATTERN.test(version)) {
    throw validation(
      `1 validation error detected: Value at '${ID_PATTERN.test(identifier) ? 'guardrailVersion' : 'guardrailIdentifier'}' failed to satisfy constraint: Member must satisfy regular expression pattern`,
    );
  }
  if ((identifier !== FAKE_GUARDRAIL.identifier && identifier !== FAKE_GUARDRAIL.arn) || !(FAKE_GUARDRAIL.versions as readonly string[]).includes(version)) {
    throw new Rejection(404, 'The guardrail identifier or version provided is not valid.', { type: 'ResourceNotFoundException' });
  }
  if (!isObject(body)) throw validation('Malformed input request, please reformat your input and try again.');
  for (const key of Object.keys(body)) {
    if (!['source', 'content', 'outputScope'].includes(key)) throw validation(`Unable to parse request body: extraneous key [${key}] is not permitted.`);
  }
  if (body.source !== 'INPUT' && body.source !== 'OUTPUT') {
    throw validation(
      `1 validation error detected: Value '${body.source ?? null}' at 'source' failed to satisfy constraint: Member must satisfy enum value set: [INPUT, OUTPUT]`,
    );
  }
  if (!Array.isArray(body.content) || body.content.length === 0) {
    throw validation("1 validation error detected: Value null at 'content' failed to satisfy constraint: Member must not be null");
  }
  body.content.forEach((block: unknown, at: number) => {
    const kinds = isObject(block) ? Object.keys(block) : [];
    if (kinds.length !== 1 || !['text', 'image'].includes(kinds[0]!)) {
      throw validation(`Unable to parse request body: content.${at} must have exactly one member of GuardrailContentBlock.`);
    }
    const text = (block as Json).text;
    if (text === undefined) return;
    if (!isObject(text) || typeof text.text !== 'string') {
      throw validation(`1 validation error detected: Value null at 'content.${at + 1}.member.text.text' failed to satisfy constraint: Member must not be null`);
    }
    for (const key of Object.keys(text))
      if (key !== 'text' && key !== 'qualifiers') throw validation(`Unable to parse request body: extraneous key [${key}] is not permitted.`);
    if (
      text.qualifiers !== undefined &&
      (!Array.isArray(text.qualifiers) || text.qualifiers.some((qualifier: unknown) => !QUALIFIERS.has(qualifier as string)))
    ) {
      throw validation(`1 validation error detected: Value at 'content.${at + 1}.member.text.qualifiers' failed to satisfy constraint`);
    }
  });
  if (body.outputScope !== undefined && body.outputScope !== 'INTERVENTIONS' && body.outputScope !== 'FULL') {
    throw validation(`1 validation error detected: Value '${body.outputScope}' at 'outputScope' failed to satisfy constraint`);
  }
}

/** The ApplyGuardrail answer for a valid body: what the planted policies find in its texts. */
export function applyGuardrailAnswer(body: Json): Json {
  const texts: string[] = body.content.filter((block: Json) => block.text).map((block: Json) => block.text.text);
  const all = texts.join('\n');
  const full = body.outputScope === 'FULL';

  const piiEntities = PII.flatMap(({ type, pattern, action }) => [...all.matchAll(pattern)].map(([match]) => ({ match, type, action, detected: true })));
  const regexes = REGEXES.flatMap(({ name, regex, pattern, action }) =>
    [...all.matchAll(pattern)].map(([match]) => ({ name, match, regex, action, detected: true })),
  );
  const topics = all.toLowerCase().includes(GUARDRAIL_PLANTS.topic) ? [{ name: 'Investment Advice', type: 'DENY', action: 'BLOCKED', detected: true }] : [];
  const filters = [
    ...(all.includes(GUARDRAIL_PLANTS.violence) ? [{ type: 'VIOLENCE', confidence: 'HIGH', filterStrength: 'HIGH', action: 'BLOCKED', detected: true }] : []),
    // The full scope lists what was checked and not detected too.
    ...(full ? [{ type: 'HATE', confidence: 'NONE', filterStrength: 'HIGH', action: 'NONE', detected: false }] : []),
  ];
  const customWords = all.includes(GUARDRAIL_PLANTS.word) ? [{ match: GUARDRAIL_PLANTS.word, action: 'BLOCKED', detected: true }] : [];

  const acted = [...piiEntities, ...regexes, ...topics, ...filters, ...customWords].filter((entry) => entry.action !== 'NONE');
  const blocked = acted.some((entry) => entry.action === 'BLOCKED');
  const units = Math.max(1, Math.ceil(all.length / 1000));
  const usage = {
    topicPolicyUnits: units,
    contentPolicyUnits: units,
    wordPolicyUnits: units,
    sensitiveInformationPolicyUnits: units,
    sensitiveInformationPolicyFreeUnits: 0,
    contextualGroundingPolicyUnits: 0,
  };
  const coverage = { textCharacters: { guarded: all.length - texts.length + 1, total: all.length - texts.length + 1 } };
  const assessment: Json = {
    ...(topics.length ? { topicPolicy: { topics } } : {}),
    ...(filters.length ? { contentPolicy: { filters } } : {}),
    ...(customWords.length ? { wordPolicy: { customWords, managedWordLists: [] } } : {}),
    ...(piiEntities.length || regexes.length ? { sensitiveInformationPolicy: { piiEntities, regexes } } : {}),
    invocationMetrics: { guardrailProcessingLatency: 42, usage, guardrailCoverage: coverage },
  };
  const outputs = blocked ? [{ text: BLOCKED_MESSAGE }] : acted.length ? texts.map((text) => ({ text: anonymized(text) })) : [];
  return {
    usage,
    action: acted.length ? 'GUARDRAIL_INTERVENED' : 'NONE',
    actionReason: blocked ? 'Guardrail blocked.' : acted.length ? 'Guardrail masked.' : 'No action.',
    outputs,
    assessments: [assessment],
    guardrailCoverage: coverage,
  };
}

/** A text as Bedrock returns it when it only anonymizes: each value replaced by `{TYPE}`. */
function anonymized(text: string): string {
  let out = text;
  for (const { type, pattern, action } of PII) if (action === 'ANONYMIZED') out = out.replace(pattern, `{${type}}`);
  for (const { name, pattern } of REGEXES) out = out.replace(pattern, `{${name}}`);
  return out;
}

function validation(message: string): Rejection {
  return new Rejection(400, message, { type: 'ValidationException' });
}
