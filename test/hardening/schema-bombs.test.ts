import { GoogleGenAI } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { definitionChain, selfReference } from '../helpers/hostile-schemas.js';
import { type FakeGemini, useGoogleHarness } from '../upstreams/google-harness.js';
import type { Harness } from '../upstreams/harness.js';

type Json = Record<string, any>;

/**
 * Code-review findings 1 and 2: `$ref`s in a tool's schema expanded without a bound. On a Gemini
 * model the schema converter grew a 369-byte request into an out-of-memory crash; on the local
 * model the schema filler answered 139 MB after blocking the loop 7 s. Now a cycle is cut where it
 * recurs, and a chain of definitions (no cycle, still exponential) is refused with a 400 naming
 * the schema's field as the client wrote it.
 */
let h: Harness;
let gemini: FakeGemini;
useGoogleHarness((started) => ({ h, gemini } = started));

const messages = [{ role: 'user' as const, content: 'Use f, please.' }];
const tool = (parameters: Json) => [{ type: 'function' as const, function: { name: 'f', parameters } }];

async function post(path: string, body: Json, headers: Record<string, string> = {}): Promise<{ status: number; body: Json; bytes: number }> {
  const response = await fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), bytes: text.length };
}

describe('finding 1: a Gemini model', () => {
  it('answers the 369-byte self-referencing schema with the cycle cut, as a small schema upstream', async () => {
    const body = { model: 'gem-25', messages, tools: tool(selfReference(3)) };
    expect(JSON.stringify(body).length).toBeLessThan(400);
    const completion = await h.openai.chat.completions.create(body);
    expect(completion.choices[0]?.message.content).toBe('Hello from upstream.');
    const sent = gemini.last().body.tools[0].functionDeclarations[0].parameters;
    const inner = { type: 'OBJECT', properties: { p0: {}, p1: {}, p2: {} } };
    expect(sent).toEqual({ type: 'OBJECT', properties: { p0: inner, p1: inner, p2: inner } });
  });

  it('refuses a chain of definitions that multiplies, naming the field in each client protocol, before any upstream call', async () => {
    const schema = definitionChain(12, 3);
    const chat = await h.openai.chat.completions.create({ model: 'gem-25', messages, tools: tool(schema) }).catch((error: unknown) => error);
    expect(chat).toMatchObject({ status: 400, code: 'schema_too_complex', param: 'tools[0].function.parameters' });

    const responses = await post('/v1/responses', { model: 'gem-25', input: 'Use f.', tools: [{ type: 'function', name: 'f', parameters: schema }] });
    expect(responses).toMatchObject({ status: 400, body: { error: { code: 'schema_too_complex', param: 'tools[0].parameters' } } });

    const format = await post('/v1/responses', { model: 'gem-25', input: 'Answer.', text: { format: { type: 'json_schema', name: 'x', schema } } });
    expect(format.body.error).toMatchObject({ code: 'schema_too_complex', param: 'text.format.schema' });

    const claude = await h.anthropic.messages
      .create({ model: 'gem-25', max_tokens: 50, messages, tools: [{ name: 'f', input_schema: schema as never }] })
      .catch((error: unknown) => error);
    expect(claude).toMatchObject({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error' } } });
    expect((claude as Error).message).toContain("'tools[0].input_schema'");

    expect(gemini.requests).toHaveLength(0);
  });
});

describe('finding 2: the local model', () => {
  it('fills the 535-byte schema of the review (6 self-references) with the cycle cut: a small answer', async () => {
    const schema = selfReference(6);
    const body = { model: 'local-chat', messages: [{ role: 'user', content: 'Call f now.' }], tools: tool(schema), tool_choice: 'required' };
    const answer = await post('/v1/chat/completions', body);
    expect(answer.status).toBe(200);
    const call = answer.body.choices[0].message.tool_calls[0];
    const inner = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`p${i}`, null]));
    expect(JSON.parse(call.function.arguments)).toEqual(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`p${i}`, inner])));
    expect(answer.bytes).toBeLessThan(2_000);
  });

  it('refuses a schema that fills past the budget, in every route, naming the field', async () => {
    // The filler stops 8 levels down, so the chain is wide rather than deep: 20^5 values.
    const schema = definitionChain(5, 20);
    const call = await post('/v1/chat/completions', { model: 'local-chat', messages, tools: tool(schema), tool_choice: 'required' });
    expect(call).toMatchObject({ status: 400, body: { error: { code: 'schema_too_complex', param: 'tools[0].function.parameters' } } });

    const format = await post('/v1/chat/completions', {
      model: 'local-chat',
      messages,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
    });
    expect(format.body.error).toMatchObject({ code: 'schema_too_complex', param: 'response_format.json_schema.schema' });

    const claude = await post('/v1/messages', {
      model: 'local-chat',
      max_tokens: 50,
      messages,
      tools: [{ name: 'f', input_schema: schema }],
      tool_choice: { type: 'any' },
    });
    expect(claude).toMatchObject({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error' } } });
    expect(claude.body.error.message).toContain("'tools[0].input_schema'");

    const genai = new GoogleGenAI({ apiKey: 'sk-test', httpOptions: { baseUrl: h.url } });
    const google = await genai.models
      .generateContent({
        model: 'local-chat',
        contents: [{ role: 'user', parts: [{ text: 'Call f now.' }] }],
        config: {
          tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: schema }] }],
          toolConfig: { functionCallingConfig: { mode: 'ANY' as never } },
        },
      })
      .catch((error: unknown) => error);
    expect(google).toMatchObject({ status: 400 });
    expect((google as Error).message).toContain('tools[0].functionDeclarations[0].parametersJsonSchema');
  });
});
