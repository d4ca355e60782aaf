/**
 * Text made of parts, kept apart until it is serialized. A `data:` URL around a 20 MB base64
 * string, built with `+`, is a rope that V8 copies whole (about 15 ms) the first time anything
 * reads it; `stringifyBody` (`providers/http/stringify-body.ts`) writes the parts one after
 * another instead, so the base64 stays the slice of the client's body it was decoded as.
 * `JSON.stringify` elsewhere sees the joined text.
 */
export class JoinedText {
  readonly length: number;

  constructor(readonly parts: readonly string[]) {
    this.length = parts.reduce((sum, part) => sum + part.length, 0);
  }

  toJSON(): string {
    return this.parts.join('');
  }
}

/** Base64 data at least this long is not joined to its header. */
const JOIN_LATER = 64 * 1024;

/** `data:<mediaType>;base64,<data>` for an upstream request: text, or parts when the data is long. */
export function dataUrl(mediaType: string, data: string): string | JoinedText {
  const header = `data:${mediaType};base64,`;
  return data.length < JOIN_LATER ? header + data : new JoinedText([header, data]);
}
