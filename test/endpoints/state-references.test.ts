import { describe, expect, it } from 'vitest';
import { settle, type EndpointRig, useEndpointRig } from './rig.js';

/**
 * References to stored state that an upstream resolves in the operator's account, whichever
 * gateway key made them (`previous_response_id`, `conversation`, `item_reference`): the gateway's
 * key scoping holds on every route that takes a Responses body, not only on `/v1/responses`.
 * Key `sk-b` knows an id of key `sk-a`'s (from a shared log, a support ticket…).
 */
let rig: EndpointRig;
useEndpointRig((started) => (rig = started));

type Json = Record<string, any>;

async function post(path: string, body: Json, key = 'sk-b'): Promise<{ status: number; json: Json }> {
  const response = await fetch(`${rig.url}/v1/responses${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Json };
}

/** A response key `sk-a` made on `model`, and its id. */
async function responseOfA(model: string): Promise<string> {
  const answer = await rig.openai('sk-a').responses.create({ model, input: 'My salary is 123,456.' });
  await settle();
  rig.reset();
  return answer.id;
}

const reachedUpstream = () => [...rig.responses.requests, ...rig.chat.requests];

describe('previous_response_id on /v1/responses/compact and /input_tokens', () => {
  it('on a model whose state the upstream holds: 400 as on /v1/responses, and the upstream never sees the id', async () => {
    const foreign = await responseOfA('gpt-resp');
    for (const path of ['', '/compact', '/input_tokens']) {
      const { status, json } = await post(path, { model: 'gpt-resp', previous_response_id: foreign, input: 'Repeat the conversation so far.' });
      expect(status).toBe(400);
      expect(json.error).toMatchObject({ param: 'previous_response_id', code: 'unsupported_parameter' });
    }
    expect(reachedUpstream()).toHaveLength(0);
  });

  it('on a model whose state the gateway keeps: another key’s id is the 404 of an unknown one; the owner’s is expanded', async () => {
    const foreign = await responseOfA('gpt-chat-state');
    for (const path of ['/compact', '/input_tokens']) {
      for (const id of [foreign, 'resp_unknown']) {
        const { status, json } = await post(path, { model: 'gpt-chat-state', previous_response_id: id, input: 'Repeat the conversation so far.' });
        expect(status).toBe(404);
        expect(json.error).toMatchObject({ param: 'previous_response_id', code: 'previous_response_not_found' });
      }
    }
    expect(reachedUpstream()).toHaveLength(0);

    const own = await post('/input_tokens', { model: 'gpt-chat-state', previous_response_id: foreign, input: 'And now?' }, 'sk-a');
    expect(own.status).toBe(200);
    const alone = await post('/input_tokens', { model: 'gpt-chat-state', input: 'And now?' }, 'sk-a');
    expect(own.json.input_tokens).toBeGreaterThan(alone.json.input_tokens);
  });
});

describe('conversation and item_reference on Responses passthrough', () => {
  it('refuses `conversation` (an upstream conversation object) unless the model allows it', async () => {
    for (const path of ['', '/compact', '/input_tokens']) {
      const { status, json } = await post(path, { model: 'gpt-resp', conversation: 'conv_of_tenant_a', input: 'Repeat the conversation so far.' });
      expect(status).toBe(400);
      expect(json.error).toMatchObject({ param: 'conversation', code: 'unsupported_parameter' });
    }
    expect(reachedUpstream()).toHaveLength(0);

    const allowed = await post('', { model: 'gpt-resp-conversations', conversation: 'conv_1', input: 'Hi' });
    expect(allowed.status).toBe(200);
    expect(rig.responses.last().body.conversation).toBe('conv_1');
  });

  it('refuses an `item_reference` no response of this key produced, in either form', async () => {
    for (const reference of [{ type: 'item_reference', id: 'msg_of_tenant_a' }, { id: 'msg_of_tenant_a' }]) {
      for (const path of ['', '/compact', '/input_tokens']) {
        // A storing upstream would resolve it in the operator's account: the 404 of an unknown id.
        const passed = await post(path, { model: 'gpt-resp', input: [{ role: 'user', content: 'Repeat this:' }, reference] });
        expect(passed.status).toBe(404);
        expect(passed.json.error).toMatchObject({ param: 'input[1].id', code: 'item_not_found' });
        // No upstream of this model keeps items: a 400.
        const translated = await post(path, { model: 'gpt-chat', input: [{ role: 'user', content: 'Repeat this:' }, reference] });
        expect(translated.status).toBe(400);
        expect(translated.json.error).toMatchObject({ param: 'input[1].type', code: 'unsupported_parameter' });
      }
    }
    expect(reachedUpstream()).toHaveLength(0);
  });
});
