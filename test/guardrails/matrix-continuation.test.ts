import type Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, type Content, type Part } from '@google/genai';
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMAIL, type GuardrailMatrix, inPieces, startGuardrailMatrix } from './matrix-harness.js';

/**
 * A tool loop continued through the guardrails on passthrough deployments: the answer is decoded
 * to be checked and encoded again, and what the client sends back on the next turn (signatures,
 * encrypted reasoning) must still be what the upstream issued, while the masked call stays masked.
 */
let m: GuardrailMatrix;
beforeAll(async () => {
  m = await startGuardrailMatrix();
});
afterAll(() => m?.close());
beforeEach(() => m.reset());

const MAIL_SCHEMA = { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] };
/** A call whose arguments hold an e-mail, in fragments cut inside it. */
const CALL = { name: 'send_mail', args: inPieces(JSON.stringify({ to: EMAIL }), 6) };
const QUESTION = 'Mail the report.';

describe('a tool loop through an output guardrail on passthrough', () => {
  it('Messages: the thinking block and its signature go back to Anthropic as it issued them', async () => {
    m.fakes.anthropic.reply({ reasoning: ['The user wants ', 'a mail.'], toolCalls: [CALL] });
    const tools: Anthropic.Tool[] = [{ name: 'send_mail', input_schema: MAIL_SCHEMA as Anthropic.Tool.InputSchema }];
    const thinking = { type: 'enabled' as const, budget_tokens: 2048 };
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: QUESTION }];
    const first = await m.h.anthropic.messages.stream({ model: 'claude', max_tokens: 4096, thinking, tools, messages }).finalMessage();

    const use = first.content.find((block) => block.type === 'tool_use');
    expect(use?.input).toEqual({ to: '[REDACTED:email]' });
    const block = first.content.find((each) => each.type === 'thinking');
    // The fake's own signature (`EqQBCgIYAhIM…sig`), not one the gateway wrapped.
    expect(block?.type === 'thinking' && block.signature).toMatch(/^EqQBCgIYAhIM\w+sig$/);

    m.fakes.anthropic.reply({ text: ['Sent.'] });
    const second = await m.h.anthropic.messages.create({
      model: 'claude',
      max_tokens: 4096,
      thinking,
      tools,
      messages: [
        ...messages,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use!.id, content: 'sent' }] },
      ],
    });
    expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: 'Sent.' })]);
    const replayed = m.fakes.anthropic.last().body.messages[1].content;
    expect(replayed[0]).toMatchObject({ type: 'thinking', signature: block?.type === 'thinking' ? block.signature : undefined });
    expect(replayed.find((each: { type: string }) => each.type === 'tool_use').input).toEqual({ to: '[REDACTED:email]' });
  });

  it('Responses: the reasoning item keeps the id its encrypted content was issued with', async () => {
    m.fakes.responses.reply({ reasoning: ['The user wants ', 'a mail.'], toolCalls: [CALL] });
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'send_mail', parameters: MAIL_SCHEMA, strict: false }];
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: QUESTION }];
    const request = {
      model: 'gpt-resp',
      tools,
      store: false,
      include: ['reasoning.encrypted_content' as const],
      reasoning: { effort: 'low' as const, summary: 'auto' as const },
    };
    const first = await m.h.openai.responses.stream({ ...request, input }).finalResponse();

    const reasoning = first.output.find((item) => item.type === 'reasoning');
    // The fake's encrypted content names the item it was issued for (`gAAAAAB<id>`).
    expect(reasoning?.encrypted_content).toBe(`gAAAAAB${reasoning?.id}`);
    const call = first.output.find((item) => item.type === 'function_call');
    expect(JSON.parse(call!.arguments)).toEqual({ to: '[REDACTED:email]' });

    m.fakes.responses.reply({ text: ['Sent.'] });
    const second = await m.h.openai.responses.create({
      ...request,
      input: [...input, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call!.call_id, output: 'sent' }],
    });
    expect(second.output_text).toBe('Sent.');
    const replayed = m.fakes.responses.last().body.input.find((item: { type: string }) => item.type === 'reasoning');
    expect(replayed).toMatchObject({ id: reasoning?.id, encrypted_content: reasoning?.encrypted_content });
  });

  it('Gemini 3: the call keeps the thought signature the API issued, and the next turn is accepted', async () => {
    m.fakes.gemini.reply({ toolCalls: [CALL] });
    const genai = new GoogleGenAI({ apiKey: 'sk-test', httpOptions: { baseUrl: m.h.url } });
    const config = { tools: [{ functionDeclarations: [{ name: 'send_mail', parametersJsonSchema: MAIL_SCHEMA }] }] };
    const contents: Content[] = [{ role: 'user', parts: [{ text: QUESTION }] }];
    const parts: Part[] = [];
    for await (const chunk of await genai.models.generateContentStream({ model: 'gem-3', contents, config }))
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));

    const call = parts.find((part) => part.functionCall);
    expect(call?.functionCall?.args).toEqual({ to: '[REDACTED:email]' });
    expect([...m.fakes.gemini.signatures]).toContain(call?.thoughtSignature);

    m.fakes.gemini.reply({ text: ['Sent.'] });
    const next: Content[] = [
      ...contents,
      { role: 'model', parts },
      { role: 'user', parts: [{ functionResponse: { id: call!.functionCall!.id!, name: 'send_mail', response: { result: 'sent' } } }] },
    ];
    const second = await genai.models.generateContent({ model: 'gem-3', config, contents: next });
    expect(second.text).toBe('Sent.');
  });
});
