import { itemsWithIds } from '../../state/response-store.js';

/**
 * At most this many output item ids of one response are recorded as its key's (a hostile or
 * runaway upstream answer must not grow the response store without bound); a reference to a
 * later item is refused like an unknown one.
 */
export const MAX_RECORDED_ITEM_IDS = 256;

/** The ids of a Responses answer's `output` items, of the first `MAX_RECORDED_ITEM_IDS`. */
export function outputItemIdsOf(output: unknown): string[] {
  if (!Array.isArray(output)) return [];
  return itemsWithIds(output.slice(0, MAX_RECORDED_ITEM_IDS)).map(([id]) => id);
}
