import { GoogleGenAI } from '@google/genai';
import { type FakeGemini, useGoogleHarness } from './google-harness.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeTokenCount } from '../fakes/fake-gemini.js';
import type { Harness } from './harness.js';

/** `@google/genai`'s `models.countTokens` against the gateway: Google counts for a Gemini upstream, a tokenizer for the others. */
let h: Harness;
let genai: GoogleGenAI;
let gemini: FakeGemini;
useGoogleHarness((started) => ({ h, gemini } = started));
beforeAll(() => {
  genai = new GoogleGenAI({ apiKey: 'sk-test', httpOptions: { baseUrl: h.url } });
});

const contents = [{ role: 'user', parts: [{ text: 'How many tokens are in this sentence, roughly?' }] }];

describe('countTokens for Gemini clients', () => {
  it("answers Google's own count for a Gemini upstream, asked as a generateContentRequest of the upstream model", async () => {
    const counted = await genai.models.countTokens({ model: 'gem-25', contents });
    expect(counted.totalTokens).toBe(fakeTokenCount({ contents }));
    expect(gemini.last().path).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    expect(gemini.last().body).toEqual({ generateContentRequest: { model: 'models/gemini-2.5-flash', contents } });
  });

  it('counts a Gemini 3 history with another model’s call: the call goes with Google’s skip value, as a generation’s would', async () => {
    const history = [
      ...contents,
      { role: 'model', parts: [{ functionCall: { id: 'toolu_01', name: 'get_weather', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'toolu_01', name: 'get_weather', response: { output: '18°C' } } }] },
    ];
    const counted = await genai.models.countTokens({ model: 'gem-3', contents: history });
    expect(counted.totalTokens).toBe(fakeTokenCount({ contents: history }));
    expect(gemini.last().body.generateContentRequest.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
  });

  it('counts the system instruction and tools of a generateContentRequest', async () => {
    const generateContentRequest = {
      contents,
      systemInstruction: { parts: [{ text: 'You are terse and exact, always.' }] },
      tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }],
    };
    const response = await fetch(`${h.url}/v1beta/models/gem-25:countTokens`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'sk-test', 'content-type': 'application/json' },
      body: JSON.stringify({ generateContentRequest: { model: 'models/gem-25', ...generateContentRequest } }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { totalTokens: number }).totalTokens).toBe(fakeTokenCount(generateContentRequest));
    expect(gemini.last().body.generateContentRequest.model).toBe('models/gemini-2.5-flash');
  });

  it('counts with a tokenizer on upstreams that do not count Gemini bodies, and none is called', async () => {
    for (const model of ['local-chat', 'gpt-chat', 'claude']) {
      const counted = await genai.models.countTokens({ model, contents });
      expect(counted.totalTokens).toBeGreaterThan(5);
      expect(counted.totalTokens).toBeLessThan(30);
    }
    expect(h.upstreams.chat.fake.requests).toHaveLength(0);
    expect(h.upstreams.anthropic.fake.requests).toHaveLength(0);
  });

  it('names a bad content by its path', async () => {
    const response = await fetch(`${h.url}/v1beta/models/gem-25:countTokens`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'sk-test', 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: 'not parts' }] }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { details: { fieldViolations?: { field: string }[] }[] } };
    expect(body.error.details.find((detail) => detail.fieldViolations)?.fieldViolations?.[0]?.field).toBe('contents[0].parts');
    expect(gemini.requests).toHaveLength(0);
  });
});
