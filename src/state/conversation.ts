import { createParser } from 'eventsource-parser';
import { GatewayError, invalidRequest } from '../errors.js';
import { isRecord, parseJson } from '../json.js';
import { jsonTextOf } from '../http/json-response.js';
import { itemReferenceRefused } from '../protocols/responses/index.js';
import type { ResponseStore } from './response-store.js';

/**
 * Conversation state for Responses, in three steps around the text pipeline: before it,
 * `continueConversation` replaces `previous_response_id` with the stored history and each
 * `item_reference` with the stored item; around its
 * answer, `recordResponses` watches for the completed response; the caller then stores
 * `storedItemsOf(history, output)` under the new response's id. The upstream never sees
 * `previous_response_id`, so any upstream (Chat, Messages, Responses) continues the conversation.
 */

/** A Responses request with its history expanded, and the items its answer continues from. */
export interface ContinuedRequest {
  /** The body without `previous_response_id`, its `input` the stored items then its own (references expanded). */
  body: Record<string, unknown>;
  /** What the new response continues from, to store with its output: stored items + this input. */
  history: unknown[];
}

/** What `recordResponses` reports of a completed response. */
export interface CompletedResponse {
  id: string;
  output: unknown[];
  status?: string | undefined;
  /** The whole Response object as the client got it. */
  response: Record<string, unknown>;
}

/**
 * Expands `previous_response_id`: the stored conversation, then this request's input. An unknown
 * id and one created by another key get the same 404, so a key cannot probe for others' ids.
 * The previous request's `instructions` are never stored, hence never inherited (spec 2.2); this
 * request's own `instructions` stay in the body. Each `item_reference` in the input becomes the
 * stored item (see `expandReferences`). With nothing to expand the body is returned as it is.
 */
export async function continueConversation(store: ResponseStore, keyId: string, body: Record<string, unknown>): Promise<ContinuedRequest> {
  const given = inputItemsOf(body.input);
  const input = await expandReferences(store, keyId, given);
  const previousId = body.previous_response_id;
  if (previousId === undefined || previousId === null) {
    return { body: input === given ? body : { ...body, input }, history: input };
  }
  const previous = typeof previousId === 'string' && previousId !== '' ? await store.get(previousId) : undefined;
  if (!previous || previous.keyId !== keyId) {
    throw new GatewayError({
      status: 404,
      message: `Previous response with id '${String(previousId)}' not found.`,
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    });
  }
  const { previous_response_id: _, ...rest } = body;
  const history = [...previous.items, ...input];
  return { body: { ...rest, input: history }, history };
}

/**
 * The input with each `item_reference` replaced by the item of that id this key's responses
 * stored (one store call for all), as OpenAI resolves them; the same array when there is none.
 */
async function expandReferences(store: ResponseStore, keyId: string, input: unknown[]): Promise<unknown[]> {
  const found = await referencedItems(store, keyId, input);
  if (found.size === 0) return input;
  return input.map((item, i) => (found.has(i) ? found.get(i) : item));
}

/**
 * Checks that every `item_reference` in the input names an item this key's responses produced,
 * so the upstream that stored them may resolve it: a Responses passthrough answer records its
 * output items' ids for its key. Nothing is changed; the same 404 as `expandReferences`.
 */
export async function checkReferencesOwned(store: ResponseStore, keyId: string, input: unknown[]): Promise<void> {
  await referencedItems(store, keyId, input);
}

/**
 * The stored item of each `item_reference` in the input, by index (one store call for all).
 * An id not found, or stored by another key, is a 404 like OpenAI's, with no hint of which.
 * With a store without `getItems`, a reference is a 400: no upstream gets to resolve it.
 */
async function referencedItems(store: ResponseStore, keyId: string, input: unknown[]): Promise<Map<number, unknown>> {
  const at = input.flatMap((item, i) => (isItemReference(item) ? [i] : []));
  if (at.length === 0) return new Map();
  // Left as they are, a Responses upstream would resolve them in the operator's account, for any key.
  if (!store.getItems) throw itemReferenceRefused(`input[${at[0]}]`);
  const ids = at.map((i) => {
    const id = (input[i] as Record<string, unknown>).id;
    if (typeof id !== 'string' || id === '') throw invalidRequest(`Invalid value for 'input[${i}].id': expected the id of a stored item.`, `input[${i}].id`);
    return id;
  });
  const items = await store.getItems(keyId, ids);
  const found = new Map<number, unknown>();
  at.forEach((i, n) => {
    const item = items[n];
    if (item === undefined) {
      throw new GatewayError({ status: 404, message: `Item with id '${ids[n]}' not found.`, param: `input[${i}].id`, code: 'item_not_found' });
    }
    found.set(i, item);
  });
  return found;
}

/** `{ type: 'item_reference', id }`; OpenAI also takes the bare `{ id }` (its `type` is optional). */
export function isItemReference(item: unknown): boolean {
  if (!isRecord(item)) return false;
  return item.type === 'item_reference' || (item.type == null && item.role === undefined && 'id' in item && !('content' in item));
}

/**
 * What is stored for a response: the history it continued from, then its output items, which are
 * valid input items as they are (`message` with `output_text`/`refusal` parts, `function_call`
 * with its `id` and `call_id` so a later `function_call_output` matches, `reasoning` with its
 * `encrypted_content`). They are kept whole rather than rebuilt from a list of known fields, so
 * what a newer upstream adds is not lost; anything that is not an item (no string `type`) is
 * dropped.
 */
export function storedItemsOf(history: unknown[], output: unknown[]): unknown[] {
  return [...history, ...output.filter((item) => isRecord(item) && typeof item.type === 'string')];
}

/**
 * Watches a Responses answer for its completion without changing it: `onCompleted` gets the
 * response's `id` and `output` once it is completed, before the client can have read that part
 * (so a next turn finds it stored). Never for an error status, nor for a response that failed,
 * is incomplete or still in progress. The returned Response has the same status and headers.
 *
 * - JSON (`application/json`): the body is read where it is already a string, else teed through
 *   a stream and parsed at its end.
 * - SSE (`text/event-stream`): the bytes pass through unchanged while an SSE parser looks for
 *   `response.completed`; one pass per chunk, nothing buffered but the parser's current event.
 *   It is a `pipeThrough`, so backpressure holds and a client that cancels cancels the source.
 *
 * A throwing `onCompleted` never breaks the answer: recording is best effort.
 */
export async function recordResponses(response: Response, onCompleted: (completed: CompletedResponse) => Promise<void> | void): Promise<Response> {
  if (!response.ok || response.body === null) return response;
  const type = (response.headers.get('content-type') ?? '').toLowerCase();
  const report = (value: unknown): Promise<void> | undefined => {
    const completed = completedOf(value);
    if (!completed) return undefined;
    try {
      return onCompleted(completed) ?? undefined;
    } catch {
      // Best effort: the client's answer matters more than its record.
      return undefined;
    }
  };
  if (type.startsWith('text/event-stream')) return watchEvents(response, report);
  if (type.startsWith('application/json')) return watchJson(response, report);
  return response;
}

/** The parts of a completed response that are recorded; undefined for anything else. */
function completedOf(value: unknown): CompletedResponse | undefined {
  if (!isRecord(value) || typeof value.id !== 'string' || !Array.isArray(value.output)) return undefined;
  if (value.status !== undefined && value.status !== 'completed') return undefined;
  return { id: value.id, output: value.output, status: typeof value.status === 'string' ? value.status : undefined, response: value };
}

/**
 * The record is written before the client can have the answer (a JSON body, a stream's terminal
 * event), so its next request, on any instance sharing the store, finds it.
 */
type Report = (body: unknown) => Promise<void> | undefined;

async function watchJson(response: Response, report: Report): Promise<Response> {
  // A JSON answer the gateway built is read as the string it holds: no stream in between, which
  // would lose the host's one-write fast path.
  const known = jsonTextOf(response);
  if (known !== undefined) {
    await report(parseJson(known));
    return response;
  }
  const decoder = new TextDecoder();
  let text = '';
  return rebody(
    response,
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        text += decoder.decode(chunk, { stream: true });
        controller.enqueue(chunk);
      },
      flush() {
        return report(parseJson(text + decoder.decode()));
      },
    }),
  );
}

function watchEvents(response: Response, report: Report): Response {
  const decoder = new TextDecoder();
  let seen = false;
  let written: Promise<void> | undefined;
  const parser = createParser({
    onEvent(message) {
      if (seen) return;
      // Parse only the terminal event; an upstream may leave out `event:` lines (type in data only).
      if (message.event !== undefined ? message.event !== 'response.completed' : !message.data.includes('"response.completed"')) return;
      const data = parseJson(message.data);
      if (!isRecord(data) || data.type !== 'response.completed') return;
      seen = true;
      written = report(data.response);
    },
  });
  return rebody(
    response,
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        // Parsed before it is passed on: the record is written before the client reads the event.
        if (!seen) parser.feed(decoder.decode(chunk, { stream: true }));
        if (!written) return controller.enqueue(chunk);
        const writing = written;
        written = undefined;
        return writing.then(() => controller.enqueue(chunk));
      },
    }),
  );
}

/** The same answer (status, headers) with its body piped through `transform`. */
function rebody(response: Response, transform: TransformStream<Uint8Array, Uint8Array>): Response {
  return new Response(response.body!.pipeThrough(transform), { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A request's `input` as items: a string is one user message; absent is none. */
function inputItemsOf(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}
