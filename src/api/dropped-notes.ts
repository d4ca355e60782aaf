import type { IRRequest } from '../protocols/ir.js';

/** The answer headers that name what the upstream could not take; the response cache keeps and replays them. */
export const DROPPED_TOOLS = 'x-infergate-dropped-tools';
export const DROPPED_PARAMS = 'x-infergate-dropped-params';

/**
 * What the upstream could not take, said in headers: hosted tools it cannot run
 * (`x-infergate-dropped-tools`), sampling hints it lacks and fields no decoder reads
 * (`x-infergate-dropped-params`, filled by `ignored-fields.ts` and the upstream encoder). The names
 * come from the client: only printable ASCII goes into a header (a NUL or a line break there would
 * break the answer on the wire), and only so much of them.
 */
export function droppedNotes(ir: IRRequest): Record<string, string> {
  const notes: Record<string, string> = {};
  if (ir.droppedTools?.length) notes[DROPPED_TOOLS] = headerList(ir.droppedTools);
  if (ir.droppedParams?.length) notes[DROPPED_PARAMS] = headerList(ir.droppedParams);
  return notes;
}

/** Longest name, and longest list, put in a header: a client's field name can be any length. */
const MAX_NAME = 100;
const MAX_LIST = 2000;

function headerList(names: readonly string[]): string {
  let list = '';
  for (const name of names) {
    const shown = name.length <= MAX_NAME ? name : `${name.slice(0, MAX_NAME)}...`;
    const next = list ? `${list}, ${shown}` : shown;
    if (next.length > MAX_LIST) return `${list}, ...`;
    list = next;
  }
  return list.replace(/[^\x20-\x7e]/g, '?');
}
