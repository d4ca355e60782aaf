import type { Dispatcher } from 'undici';
import { isRecord } from '../../json.js';
import { readJson } from '../../providers/http/get-json.js';
import { mapLimited } from '../../providers/http/map-limited.js';
import { UpstreamClient } from '../../providers/http/upstream-client.js';
import type { GuardrailChecker, GuardrailFinding, TextVerdict } from '../checker.js';
import type { GuardrailSpecOf } from '../guardrail-schema.js';
import { callService, guardrailName, malformed, NOTHING_FOUND, nonEmptyPositions } from './remote-check.js';

/** Analyzer calls one check has in flight: a long conversation must not open a socket per message. */
export const PRESIDIO_CALLS_IN_FLIGHT = 4;

const SERVICE = 'Presidio analyzer';

export interface PresidioOptions {
  /** An undici dispatcher to share (tests inject one); default: a pooled keep-alive agent of the checker's own. */
  dispatcher?: Dispatcher | undefined;
}

/** A checker that holds pooled connections, released by `close`. */
export interface ClosableChecker extends GuardrailChecker {
  close(): Promise<void>;
}

/**
 * The `presidio` guardrail: each non-empty text in its own `POST {analyzerUrl}/analyze` with
 * `{ text, language, entities?, score_threshold? }` and the configured headers, at most
 * `PRESIDIO_CALLS_IN_FLIGHT` at a time (the first failure ends the rest), through a pooled undici
 * client. Each result is a span (Python's code-point offsets turned into UTF-16 ones), category
 * the entity type in lower case. The gateway masks from the spans itself (Presidio's anonymizer is
 * not called), so a passthrough body is masked the same way.
 */
export function presidioChecker(spec: GuardrailSpecOf<'presidio'>, options: PresidioOptions = {}): ClosableChecker {
  const name = guardrailName(spec);
  const client = new UpstreamClient({
    baseURL: spec.analyzerUrl,
    headers: { ...spec.headers },
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const fields = {
    language: spec.language ?? 'en',
    ...(spec.entities ? { entities: spec.entities } : {}),
    ...(spec.scoreThreshold !== undefined ? { score_threshold: spec.scoreThreshold } : {}),
  };

  const analyze = async (text: string, signal: AbortSignal): Promise<GuardrailFinding[]> => {
    const answer = await callService(name, SERVICE, signal, async () =>
      readJson(await client.post('/analyze', JSON.stringify({ text, ...fields }), { signal, headers: { accept: 'application/json' } })),
    );
    if (!Array.isArray(answer)) throw malformed(name, SERVICE, 'something other than a list of results');
    const offset = utf16Offsets(text);
    return answer.map((result, at): GuardrailFinding => {
      const { entity_type: type, start, end } = isRecord(result) ? result : {};
      if (typeof type !== 'string' || type === '' || !isOffset(start, offset.length) || !isOffset(end, offset.length) || start >= end) {
        throw malformed(name, SERVICE, `a result without an entity type and offsets within the text at [${at}]`);
      }
      return { category: type.toLowerCase(), start: offset.at(start), end: offset.at(end) };
    });
  };

  return {
    canMask: true,
    async check(texts, context) {
      const positions = nonEmptyPositions(texts);
      const found = await mapLimited(positions, PRESIDIO_CALLS_IN_FLIGHT, context.signal, (at, signal) => analyze(texts[at]!, signal));
      const verdicts: TextVerdict[] = texts.map(() => NOTHING_FOUND);
      positions.forEach((at, index) => {
        if (found[index]!.length) verdicts[at] = { findings: found[index]! };
      });
      return verdicts;
    },
    close: () => client.close(),
  };
}

function isOffset(value: unknown, length: number): value is number {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= length;
}

/**
 * A text's offsets as Python counts them (code points: a surrogate pair is one, a lone
 * surrogate one too) mapped to JavaScript's UTF-16 ones; `length` in code points. A text with
 * no surrogate pair maps each offset to itself, with no table built.
 */
export function utf16Offsets(text: string): { length: number; at(codePoint: number): number } {
  if (!/[\uD800-\uDBFF][\uDC00-\uDFFF]/.test(text)) return { length: text.length, at: (codePoint) => codePoint };
  const table: number[] = [];
  for (let unit = 0; unit < text.length; unit++) {
    table.push(unit);
    const code = text.charCodeAt(unit);
    if (code >= 0xd800 && code <= 0xdbff && unit + 1 < text.length) {
      const next = text.charCodeAt(unit + 1);
      if (next >= 0xdc00 && next <= 0xdfff) unit++;
    }
  }
  table.push(text.length);
  return { length: table.length - 1, at: (codePoint) => table[codePoint]! };
}
