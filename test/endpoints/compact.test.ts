import { describe, expect, it } from 'vitest';
import { FAKE_COMPACTION } from '../fakes/fake-openai-resources.js';
import { settle, type EndpointRig, useEndpointRig } from './rig.js';

let rig: EndpointRig;
useEndpointRig((started) => (rig = started));

type Json = Record<string, any>;

/** What Codex sends (its `CompactionInput`): the history, its instructions, its tools. */
function codexCompaction(model: string): Json {
  return {
    model,
    instructions: 'You are Codex, a coding agent.',
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Find the token in secret.txt.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"cat secret.txt"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'TOKEN-4711' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The token is TOKEN-4711.' }] },
    ],
    tools: [
      {
        type: 'function',
        name: 'exec_command',
        description: 'Runs a command.',
        parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
        strict: false,
      },
    ],
    parallel_tool_calls: true,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
  };
}

const compact = (body: Json) =>
  fetch(`${rig.url}/v1/responses/compact`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-a', 'content-type': 'application/json', 'x-codex-beta-features': 'remote_compaction_v2' },
    body: JSON.stringify(body),
  });

describe('POST /v1/responses/compact on a Responses upstream', () => {
  it("forwards Codex's body (model mapped) and answers the upstream's compaction, which later turns replay there", async () => {
    const answer = await rig.openai().responses.compact(codexCompaction('gpt-resp') as never);
    expect(rig.responses.last().path).toBe('/v1/responses/compact');
    expect(rig.responses.last().body).toEqual({ ...codexCompaction('gpt-resp'), model: 'gpt-5' });
    expect(answer.object).toBe('response.compaction');
    const item = answer.output.at(-1) as Json;
    expect(item).toMatchObject({ type: 'compaction', encrypted_content: expect.stringMatching(new RegExp(`^${FAKE_COMPACTION}`)) });

    await rig.openai().responses.create({ model: 'gpt-resp', input: [...(answer.output as never[]), { role: 'user', content: 'Go on.' }], store: false });
    expect(rig.responses.last().body.input).toContainEqual(item);
    await settle();
    expect(rig.usage.find((event) => event.endpoint === '/v1/responses/compact')).toMatchObject({ status: 'ok', usage: { input: 300, output: 40 } });
  });
});

describe('POST /v1/responses/compact: routing', () => {
  it('says which deployment compacted (x-infergate-route), and refuses an unknown x-infergate-route-order', async () => {
    const response = await compact(codexCompaction('gpt-resp'));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-infergate-route')).toMatch(/^deployment=[^;]+; reason=only; order=latency; attempts=1$/);
    const refused = await fetch(`${rig.url}/v1/responses/compact`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-a', 'content-type': 'application/json', 'x-infergate-route-order': 'soonest' },
      body: JSON.stringify(codexCompaction('gpt-resp')),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Json).error).toMatchObject({ param: 'x-infergate-route-order', code: 'invalid_value' });
  });
});

describe('POST /v1/responses/compact on other upstreams: a summary the model writes', () => {
  for (const [model, fake] of [
    ['gpt-chat', 'chat'],
    ['claude', 'anthropic'],
  ] as const) {
    it(`asks ${model} for a summary and answers a compaction that the next turn turns back into text`, async () => {
      rig[fake].reply({ text: ['The user wants the token in secret.txt; it is TOKEN-4711. Nothing remains.'], usage: { input: 120, output: 20 } });
      const response = await compact(codexCompaction(model));
      expect(response.status).toBe(200);
      const answer = (await response.json()) as Json;
      expect(answer).toMatchObject({
        id: expect.stringMatching(/^resp_/),
        object: 'response.compaction',
        created_at: expect.any(Number),
        usage: { input_tokens: 120, output_tokens: 20 },
      });
      // The user's message is kept as it was; the rest is in the compaction item.
      expect(answer.output).toEqual([
        codexCompaction(model).input[0],
        { id: expect.stringMatching(/^cmp_/), type: 'compaction', encrypted_content: expect.any(String) },
      ]);

      // The upstream was asked for text, with the tools declared but not callable.
      const asked = rig[fake].last().body;
      const lastText = JSON.stringify(fake === 'chat' ? asked.messages.at(-1) : asked.messages.at(-1).content);
      expect(lastText).toContain('summary');
      expect(asked.tool_choice).toEqual(fake === 'chat' ? 'none' : { type: 'none' });

      // Codex replays the output as its new history: the summary reaches the upstream as text.
      rig[fake].reply({ text: ['TOKEN-4711'] });
      await rig.openai().responses.create({ model, input: [...answer.output, { role: 'user', content: 'What was the token?' }], store: false });
      expect(JSON.stringify(rig[fake].last().body)).toContain('it is TOKEN-4711. Nothing remains.');
    });
  }

  it('turns the gateway’s compaction into a user message for a Responses upstream, which could not decrypt it', async () => {
    rig.chat.reply({ text: ['Summary: the token is TOKEN-4711.'] });
    const answer = (await (await compact(codexCompaction('gpt-chat'))).json()) as Json;
    await rig.openai().responses.create({ model: 'gpt-resp', input: [...answer.output, { role: 'user', content: 'And now?' }], store: false });
    const input = rig.responses.last().body.input as Json[];
    expect(input.some((item) => item.type === 'compaction')).toBe(false);
    expect(input[1]).toEqual({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: expect.stringContaining('Summary: the token is TOKEN-4711.') }],
    });
  });

  it("refuses OpenAI's encrypted compaction on an upstream that cannot read it, naming the item", async () => {
    const error = await rig
      .openai()
      .responses.create({
        model: 'gpt-chat',
        input: [{ type: 'compaction', encrypted_content: `${FAKE_COMPACTION}9` } as never, { role: 'user', content: 'Go on.' }],
      })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, error: { param: 'input[0].encrypted_content' } });
    expect(rig.chat.requests).toEqual([]);
  });
});
