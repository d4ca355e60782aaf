import { newId } from '../ids.js';

/** Prefixes of ids minted by the protocols we speak or call; swapped, not stacked, when re-prefixing. */
const KNOWN_PREFIXES = ['chatcmpl-', 'resp_', 'msg_'];

/**
 * The id a client sees for a generation, with its protocol's prefix (`chatcmpl-`, `resp_`, `msg_`).
 * Derived from the upstream id so logs on both sides can be matched; a fresh id when there is none.
 */
export function publicId(prefix: string, id: string | undefined): string {
  if (!id) return newId(prefix);
  if (id.startsWith(prefix)) return id;
  for (const known of KNOWN_PREFIXES) {
    if (id.startsWith(known)) return prefix + id.slice(known.length);
  }
  return prefix + id;
}
