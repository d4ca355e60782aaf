import type { IRRequest } from '../protocols/ir.js';

/** The answer headers that name what the upstream could not take; the response cache keeps and replays them. */
export const DROPPED_TOOLS = 'x-infergate-dropped-tools';
export const DROPPED_PARAMS = 'x-infergate-dropped-params';

/**
 * What the upstream could not take, said in headers: hosted tools it cannot run
 * (`x-infergate-dropped-tools`) and sampling hints it lacks (`x-infergate-dropped-params`, filled
 * by the upstream encoder). The names come from the client: only printable ASCII goes into a
 * header (a NUL or a line break there would break the answer on the wire).
 */
export function droppedNotes(ir: IRRequest): Record<string, string> {
  const notes: Record<string, string> = {};
  if (ir.droppedTools?.length) notes[DROPPED_TOOLS] = headerList(ir.droppedTools);
  if (ir.droppedParams?.length) notes[DROPPED_PARAMS] = headerList(ir.droppedParams);
  return notes;
}

function headerList(names: readonly string[]): string {
  return names.join(', ').replace(/[^\x20-\x7e]/g, '?');
}
