import { isObject, Rejection, type RecordedRequest, type Rendered } from './fake-server.js';

type Json = Record<string, any>;

/**
 * The fake OpenAI API's Responses endpoints beside generation: what it stored (`store` not false)
 * to retrieve, list the input items of and delete; input token counts; and remote compaction,
 * whose compaction item only this fake can read back (as only OpenAI can read its own).
 */
export class FakeResponsesResources {
  private readonly stored = new Map<string, { response: Json; input: Json[] }>();
  private compactions = 0;

  constructor(private readonly models: readonly string[]) {}

  /** Keeps a rendered response, as OpenAI does unless the request said `store: false`. */
  remember(body: Json, rendered: Rendered): void {
    if (body.store === false) return;
    const final = rendered.json ?? lastResponse(rendered.frames ?? []);
    if (!isObject(final) || typeof final.id !== 'string') return;
    const input =
      typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }] : (body.input ?? []);
    this.stored.set(final.id, { response: final, input: input.map((item: Json, i: number) => ({ id: item.id ?? `msg_in${i}_${final.id}`, ...item })) });
  }

  /**
   * The stored output item of this id, as the API resolves an `item_reference` (in the whole
   * account, whoever made it); undefined when none is stored.
   */
  item(id: string): Json | undefined {
    for (const { response } of this.stored.values()) {
      const found = (response.output ?? []).find((item: Json) => item?.id === id);
      if (found) return found;
    }
    return undefined;
  }

  /** Answers the resource endpoints; undefined for anything else. `authorize` throws like the API. */
  serve(request: RecordedRequest, authorize: () => void): Rendered | undefined {
    const { method, path } = request;
    const match = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(path);
    if (!match) return undefined;
    const [, id, inputItems] = match;
    if (method === 'POST' && id === 'input_tokens' && !inputItems) {
      authorize();
      const body = this.checkBody(request);
      return ok({ object: 'response.input_tokens', input_tokens: fakeInputTokens(body) });
    }
    if (method === 'POST' && id === 'compact' && !inputItems) {
      authorize();
      return ok(this.compact(this.checkBody(request)));
    }
    if (method !== 'GET' && method !== 'DELETE') return undefined;
    authorize();
    const entry = this.stored.get(decodeURIComponent(id!));
    if (!entry) throw new Rejection(404, `Response with id '${id}' not found.`, { type: 'invalid_request_error' });
    if (method === 'DELETE') {
      if (inputItems) throw new Rejection(404, `Invalid URL (DELETE ${path})`);
      this.stored.delete(entry.response.id);
      return ok({ id: entry.response.id, object: 'response', deleted: true });
    }
    if (!inputItems) return ok(entry.response);
    const query = new URL(request.url, 'http://fake').searchParams;
    const limit = Number(query.get('limit') ?? 20);
    const items = query.get('order') === 'asc' ? entry.input : [...entry.input].reverse();
    const data = items.slice(0, limit);
    return ok({ object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: items.length > limit });
  }

  private checkBody(request: RecordedRequest): Json {
    const body = request.body;
    if (!isObject(body)) throw new Rejection(400, 'We could not parse the JSON body of your request.', { type: 'invalid_request_error' });
    if (body.model !== undefined && !this.models.includes(body.model)) {
      throw new Rejection(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, {
        type: 'invalid_request_error',
        code: 'model_not_found',
      });
    }
    for (const [i, item] of (Array.isArray(body.input) ? body.input : []).entries()) {
      if (item?.type === 'compaction' && !String(item.encrypted_content).startsWith(FAKE_COMPACTION)) {
        throw new Rejection(400, 'The encrypted content could not be decrypted or parsed.', {
          type: 'invalid_request_error',
          param: `input[${i}].encrypted_content`,
          code: 'invalid_encrypted_content',
        });
      }
    }
    return body;
  }

  /** OpenAI's answer: the user's messages kept, then one opaque compaction item. */
  private compact(body: Json): Json {
    const input: Json[] = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
    const kept = input.filter((item) => item.role === 'user' && (item.type ?? 'message') === 'message');
    const n = ++this.compactions;
    return {
      id: `resp_cmp_fake${n}`,
      object: 'response.compaction',
      created_at: 1753120000,
      output: [...kept, { id: `cmp_fake${n}`, type: 'compaction', encrypted_content: `${FAKE_COMPACTION}${n}` }],
      usage: {
        input_tokens: 300,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 40,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 340,
      },
    };
  }
}

/** What only the fake can "decrypt": its own compaction items. */
export const FAKE_COMPACTION = 'gAAAAfakecompaction';

/** The fake's input token count: a stand-in for OpenAI's tokenizer, a pure function of the body. */
export function fakeInputTokens(body: Json): number {
  return 5 + Math.ceil(JSON.stringify([body.instructions ?? null, body.input ?? null, body.tools ?? null]).length / 4);
}

function ok(json: unknown): Rendered {
  return { status: 200, headers: { 'content-type': 'application/json' }, json };
}

function lastResponse(frames: string[]): Json | undefined {
  for (const frame of [...frames].reverse()) {
    const data = /^data: (.*)$/m.exec(frame)?.[1];
    if (!data) continue;
    const event = JSON.parse(data) as Json;
    if (event.type === 'response.completed' || event.type === 'response.incomplete') return event.response;
  }
  return undefined;
}
