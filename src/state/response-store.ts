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
}

export interface ResponseStore {
  get(id: string): Promise<StoredResponse | undefined>;
  put(response: StoredResponse): Promise<void>;
  close?(): Promise<void>;
}
