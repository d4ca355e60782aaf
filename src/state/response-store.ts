/**
 * Where finished Responses are kept so `previous_response_id` can continue them on any upstream:
 * the gateway rebuilds the conversation from the stored items and sends it whole. The memory
 * store serves one process; `RedisResponseStore` from `infergate/redis` shares it.
 */

export interface StoredResponse {
  /** The response id the client saw (`resp_…`). */
  id: string;
  /** The key that created it: another key asking for it gets 404. */
  keyId: string;
  /** Public model id. */
  model: string;
  /**
   * The whole conversation up to and including this response, as Responses input items: the
   * inherited history, this request's input, then this response's output items. Never the
   * `instructions`, which apply to their own request only (spec 2.2).
   */
  items: unknown[];
  /** ms since epoch. */
  createdAt: number;
  /**
   * The Response object as the client got it, without its `output` (the last `outputCount` of
   * `items`): what `GET /v1/responses/{id}` answers.
   */
  response?: Record<string, unknown> | undefined;
  /** How many of the last `items` are this response's output; the ones before were its input. */
  outputCount?: number | undefined;
  /**
   * Set when an upstream keeps the response itself (a Responses upstream answered it on
   * passthrough with `store` on): reads and deletes go to that deployment, and `items` holds only
   * an `{ type: 'item_reference', id }` for each of its output items, so `getItems` tells which
   * ids this key may send that upstream. The record says which key owns what and where it lives.
   */
  upstream?: { provider: string; deployment: string } | undefined;
}

export interface ResponseStore {
  get(id: string): Promise<StoredResponse | undefined>;
  /** Also makes every item of `items` that has a string `id` findable by `getItems`. */
  put(response: StoredResponse): Promise<void>;
  /**
   * The stored items with these ids, in the order asked, undefined where none is found: what an
   * `item_reference` in a request's `input` stands for (clients such as the Vercel AI SDK send
   * earlier output that way). Only items of responses that `keyId` stored are found, so a key
   * cannot read another's items; an item stays findable as long as a response holding it is kept.
   * Optional: without it an `item_reference` is a 400 (no upstream gets to resolve it).
   */
  getItems?(keyId: string, ids: string[]): Promise<(unknown | undefined)[]>;
  /**
   * Forgets a response (`DELETE /v1/responses/{id}`); resolves to whether it was there. Its items
   * stay findable while another kept response holds them. Optional: without it the gateway
   * answers such deletes with 501.
   */
  delete?(id: string): Promise<boolean>;
  close?(): Promise<void>;
}

/** The items `put` makes findable, by id: those with a non-empty string `id`, in order. */
export function itemsWithIds(items: unknown[]): [id: string, item: unknown][] {
  const found: [string, unknown][] = [];
  for (const item of items) {
    const id = typeof item === 'object' && item !== null ? (item as { id?: unknown }).id : undefined;
    if (typeof id === 'string' && id !== '') found.push([id, item]);
  }
  return found;
}
