import { describe, expect, it } from 'vitest';
import { fakeInputTokens } from '../fakes/fake-openai-resources.js';
import { settle, type EndpointRig, useEndpointRig } from './rig.js';

let rig: EndpointRig;
useEndpointRig((started) => (rig = started));

const notFound = { status: 404, error: { message: expect.stringContaining('not found') } };

describe('stored responses held by a Responses upstream (passthrough, store on)', () => {
  it('retrieves, lists the input items of and deletes a response, at the upstream that stored it', async () => {
    const created = await rig.openai().responses.create({ model: 'gpt-resp', input: 'Say hi.' });
    const retrieved = await rig.openai().responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
    const upstreamGet = rig.responses.last();
    expect([upstreamGet.method, upstreamGet.path]).toEqual(['GET', `/v1/responses/${created.id}`]);

    const items = await rig.openai().responses.inputItems.list(created.id, { limit: 5, order: 'asc' });
    expect(items.data).toMatchObject([{ type: 'message', role: 'user' }]);
    expect(rig.responses.last().url).toBe(`/v1/responses/${created.id}/input_items?limit=5&order=asc`);

    expect(await rig.openai().responses.delete(created.id)).toEqual({ id: created.id, object: 'response', deleted: true });
    expect(rig.responses.last().method).toBe('DELETE');
    // Gone at the upstream, and the gateway forgot where it was.
    await expect(rig.openai().responses.retrieve(created.id)).rejects.toMatchObject(notFound);
  });

  it('keeps a streamed response too, and only for the key that made it', async () => {
    const stream = await rig.openai().responses.create({ model: 'gpt-resp', input: 'Say hi.', stream: true });
    let id = '';
    for await (const event of stream) if (event.type === 'response.completed') id = event.response.id;
    expect(id).not.toBe('');
    await expect(rig.openai('sk-b').responses.retrieve(id)).rejects.toMatchObject(notFound);
    await expect(rig.openai('sk-b').responses.delete(id)).rejects.toMatchObject(notFound);
    expect(rig.responses.requests.map((request) => request.method)).toEqual(['POST']);
    expect((await rig.openai().responses.retrieve(id)).id).toBe(id);
    // The id the passthrough tap read for the record is in the usage event too.
    await settle();
    expect(rig.usage.find((event) => event.endpoint === '/v1/responses')?.responseId).toBe(id);
  });

  it('refuses to stream a stored response back (a 400 naming stream, not an upstream error), without asking the upstream', async () => {
    const created = await rig.openai().responses.create({ model: 'gpt-resp', input: 'Say hi.' });
    const response = await fetch(`${rig.url}/v1/responses/${created.id}?stream=true`, { headers: { authorization: 'Bearer sk-a' } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { param: 'stream' } });
    expect(rig.responses.requests.map((request) => request.method)).toEqual(['POST']);
  });

  it('keeps nothing for store: false, and 404s an id it never saw', async () => {
    const created = await rig.openai().responses.create({ model: 'gpt-resp', input: 'Say hi.', store: false });
    await expect(rig.openai().responses.retrieve(created.id)).rejects.toMatchObject(notFound);
    await expect(rig.openai().responses.inputItems.list('resp_unknown')).rejects.toMatchObject(notFound);
  });
});

describe('stored responses the gateway keeps (a model with previousResponseId, any upstream)', () => {
  it('answers the response object, its input items (paged) and its deletion from the store', async () => {
    const first = await rig.openai().responses.create({ model: 'gpt-chat-state', input: 'My name is Ada.' });
    const second = await rig.openai().responses.create({
      model: 'gpt-chat-state',
      previous_response_id: first.id,
      input: [
        { role: 'user', content: 'What is my name?' },
        { role: 'user', content: 'Answer in one word.' },
      ],
    });

    const retrieved = await rig.openai().responses.retrieve(second.id);
    expect(retrieved).toEqual(second);

    // Its input: the stored conversation, then its own input; newest first by default.
    const all = await rig.openai().responses.inputItems.list(second.id);
    expect(all.data.map((item) => (item as { content: { text: string }[] }).content[0]!.text)).toEqual([
      'Answer in one word.',
      'What is my name?',
      first.output_text,
      'My name is Ada.',
    ]);
    const page = await rig.openai().responses.inputItems.list(second.id, { order: 'asc', limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.has_more).toBe(true);
    const next = await rig.openai().responses.inputItems.list(second.id, { order: 'asc', limit: 2, after: page.data[1]!.id });
    expect(next.data.map((item) => item.id)).toEqual([all.data[1]!.id, all.data[0]!.id]);
    expect(next.has_more).toBe(false);

    await expect(rig.openai('sk-b').responses.retrieve(second.id)).rejects.toMatchObject(notFound);
    expect(await rig.openai().responses.delete(second.id)).toEqual({ id: second.id, object: 'response', deleted: true });
    await expect(rig.openai().responses.retrieve(second.id)).rejects.toMatchObject(notFound);
    // The chat upstream keeps nothing, so it is never asked.
    expect(rig.chat.requests.every((request) => request.path === '/v1/chat/completions')).toBe(true);
  });
});

describe('POST /v1/responses/input_tokens', () => {
  it("answers a Responses upstream's own count, the body as sent with the model mapped", async () => {
    const body = { model: 'gpt-resp', instructions: 'Be brief.', input: 'How many tokens is this?' };
    const counted = await rig.openai().responses.inputTokens.count(body);
    const upstream = rig.responses.last();
    expect(upstream.path).toBe('/v1/responses/input_tokens');
    expect(upstream.body).toEqual({ ...body, model: 'gpt-5' });
    expect(counted).toEqual({ object: 'response.input_tokens', input_tokens: fakeInputTokens(upstream.body) });
  });

  it('counts with the tokenizer on Chat and Anthropic upstreams', async () => {
    for (const model of ['gpt-chat', 'claude']) {
      const bare = await rig.openai().responses.inputTokens.count({ model, input: 'Hi' });
      expect(bare).toEqual({ object: 'response.input_tokens', input_tokens: 7 });
      const more = await rig.openai().responses.inputTokens.count({ model, instructions: 'You are a helpful assistant.', input: 'Hi' });
      expect(more.input_tokens).toBe(7 + 9);
    }
    expect(rig.chat.requests).toEqual([]);
    expect(rig.anthropic.requests).toEqual([]);
  });

  it('counts the stored conversation a previous_response_id continues, on a model that keeps state', async () => {
    const first = await rig.openai().responses.create({ model: 'gpt-chat-state', input: 'My name is Ada and I like long walks.' });
    const alone = await rig.openai().responses.inputTokens.count({ model: 'gpt-chat-state', input: 'And you?' });
    const continued = await rig.openai().responses.inputTokens.count({ model: 'gpt-chat-state', previous_response_id: first.id, input: 'And you?' });
    expect(continued.input_tokens).toBeGreaterThan(alone.input_tokens + 10);
  });

  it('needs a model', async () => {
    await expect(rig.openai().responses.inputTokens.count({ input: 'Hi' })).rejects.toMatchObject({ status: 400, error: { param: 'model' } });
  });
});
