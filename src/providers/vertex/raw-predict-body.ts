import { scanTopLevel, stringEnd } from '../../http/replace-json-model.js';

/** The `anthropic_version` Vertex AI's Claude endpoints take in the body (instead of the header). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/**
 * A Messages body as Vertex's `rawPredict` takes it: the model is in the URL, so `model` must not
 * be in the body (Vertex refuses it), and `anthropic_version` is added.
 */
export function rawPredictBody(body: Record<string, unknown>): Record<string, unknown> {
  const { model: _model, ...rest } = body;
  return { ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION };
}

/**
 * The same edit on a client's JSON text, as pieces to send one after another, without parsing
 * and serializing the body again (see `http/replace-json-model.ts`): every top-level `model`
 * member is cut out with its comma, and `anthropic_version` set (replaced, or inserted first).
 */
export function rawPredictText(json: string): string[] {
  const { open, empty, spans } = scanTopLevel(json, ['model', 'anthropic_version']);
  const version = JSON.stringify(VERTEX_ANTHROPIC_VERSION);
  const pieces: string[] = [json.slice(json.charCodeAt(0) === 0xfeff ? 1 : 0, open + 1)];
  if (!spans.some((span) => span.key === 'anthropic_version')) pieces.push(`"anthropic_version":${version}`, empty ? '' : ',');
  let at = open + 1;
  for (const span of spans) {
    if (span.key === 'anthropic_version') {
      pieces.push(json.slice(at, span.start), version);
      at = span.end;
      continue;
    }
    // Cut from the key's opening quote to the value's end, with the comma after it; the last
    // member has none, so the comma before it goes instead.
    pieces.push(json.slice(at, keyStartBefore(json, span.start)));
    const after = skipSpace(json, span.end);
    if (json.charCodeAt(after) === 0x2c) {
      at = after + 1;
    } else {
      dropTrailingComma(pieces);
      at = span.end;
    }
  }
  pieces.push(json.slice(at));
  return pieces.filter((piece) => piece !== '');
}

/** The opening quote of the key whose value starts at `valueStart` (`"key" : value`). */
function keyStartBefore(json: string, valueStart: number): number {
  let i = valueStart - 1;
  while (isSpace(json.charCodeAt(i))) i--;
  // i is the colon; before it, spaces and the key's closing quote.
  i--;
  while (isSpace(json.charCodeAt(i))) i--;
  // The key decodes to a name without quotes, so the previous quote opens it.
  const start = json.lastIndexOf('"', i - 1);
  if (start < 0 || stringEnd(json, start) !== i + 1) throw new SyntaxError('rawPredictText: malformed key');
  return start;
}

/** Removes the comma that ends the kept text (after spaces), re-slicing one piece (no copy of the body). */
function dropTrailingComma(pieces: string[]): void {
  for (let p = pieces.length - 1; p >= 0; p--) {
    const piece = pieces[p]!;
    let i = piece.length - 1;
    while (i >= 0 && isSpace(piece.charCodeAt(i))) i--;
    if (i < 0) continue;
    if (piece.charCodeAt(i) === 0x2c) pieces[p] = piece.slice(0, i) + piece.slice(i + 1);
    return;
  }
}

function skipSpace(json: string, i: number): number {
  while (isSpace(json.charCodeAt(i))) i++;
  return i;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
