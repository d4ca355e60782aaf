import type { IRRequest } from './ir.js';
import { dropField } from './upstream-params.js';

/**
 * The fields a client protocol's request decoder reads into the IR, or knows to be harmless
 * bookkeeping, at the top level and (Gemini's `generationConfig`) one level down. Schemas keep
 * unknown fields, so on a translated path anything else the client sent reaches no upstream:
 * `noteIgnoredFields` names it in `x-infergate-dropped-params`, or refuses it under
 * `strictParams` (docs/providers.md, "Parameters an upstream lacks"). Passthrough sends the
 * client's body as it came and skips this.
 */
export interface ReadFields {
  top: ReadonlySet<string>;
  /** Objects whose own fields are checked the same way: the fields read in each. */
  within?: Readonly<Record<string, ReadonlySet<string>>>;
  /** Fields not read but harmless at this value, the vendor's default (`truncation: "disabled"`). */
  defaults?: Readonly<Record<string, unknown>>;
}

/** At most this many ignored fields are named; the header carries its own length cap (`dropped-notes.ts`). */
const MAX_NAMED = 16;

/** Names (or, with `strictParams`, refuses) every field of `body` that `fields` does not list. */
export function noteIgnoredFields(ir: IRRequest, body: Record<string, unknown>, fields: ReadFields): void {
  let named = 0;
  const note = (name: string): boolean => {
    dropField(ir, name, 'the gateway has nothing to carry it to its upstream in');
    return ++named < MAX_NAMED;
  };
  for (const key in body) {
    const value = body[key];
    if (value === undefined || value === null || fields.defaults?.[key] === value) continue;
    if (!fields.top.has(key)) {
      if (!note(key)) return;
      continue;
    }
    const inner = fields.within?.[key];
    if (!inner || typeof value !== 'object' || Array.isArray(value)) continue;
    const object = value as Record<string, unknown>;
    for (const field in object) {
      if (object[field] !== undefined && object[field] !== null && !inner.has(field) && !note(`${key}.${field}`)) return;
    }
  }
}
