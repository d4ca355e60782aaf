import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rateLimited, startHarness, THROUGH_SECOND_DELTA, type Harness } from './harness.js';

/**
 * Every Anthropic-style error the gateway answers carries `request_id` in its body (the SDK types
 * `ErrorResponse.request_id: string | null` and prints the body), equal to its `request-id`
 * header, which the SDK exposes as `requestID`: the gateway's own refusals, upstream errors it
 * translates, and errors in the middle of a stream (the `error` event's data is the same body).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => h.reset());

const question: MessageParam[] = [{ role: 'user', content: 'Once upon a time?' }];

/** The SDK's typed error, checked: its status, and the body's request_id equal to the header's. */
async function expectRequestId(attempt: Promise<unknown>, status: number | undefined): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await attempt.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Anthropic.APIError);
  const apiError = error as InstanceType<typeof Anthropic.APIError>;
  expect(apiError.status).toBe(status);
  expect(apiError.requestID).toMatch(/^req_[0-9a-f]{24}$/);
  expect(apiError.error).toMatchObject({ type: 'error', error: { type: expect.any(String), message: expect.any(String) }, request_id: apiError.requestID });
  return apiError;
}

describe('request_id on Anthropic-style errors, equal to the request-id header', () => {
  it('401: an unknown key, on Messages and on the models listing', async () => {
    const stranger = new Anthropic({ baseURL: h.url, apiKey: 'sk-unknown', maxRetries: 0 });
    await expectRequestId(stranger.messages.create({ model: 'claude', max_tokens: 10, messages: question }), 401);
    await expectRequestId(stranger.models.list(), 401);
  });

  it('404: a model the key cannot use, on Messages and count_tokens', async () => {
    await expectRequestId(h.anthropic.messages.create({ model: 'nope', max_tokens: 10, messages: question }), 404);
    await expectRequestId(h.anthropic.messages.countTokens({ model: 'nope', messages: question }), 404);
  });

  it('400: a request the gateway refuses before any upstream', async () => {
    const apiError = await expectRequestId(h.anthropic.messages.create({ model: 'claude', max_tokens: -1, messages: question }), 400);
    expect(apiError.error).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(h.upstreams.anthropic.fake.requests).toHaveLength(0);
  });

  it('429 and 5xx from a translated upstream', async () => {
    h.upstreams.chat.fake.reply({ error: rateLimited('chat') });
    await expectRequestId(h.anthropic.messages.create({ model: 'gpt-chat', max_tokens: 10, messages: question }), 429);
    h.upstreams.responses.fake.reply({ error: { status: 500, message: 'internal trace at 10.0.0.7', type: 'server_error' } });
    const apiError = await expectRequestId(h.anthropic.messages.create({ model: 'gpt-resp', max_tokens: 10, messages: question }), 500);
    expect(apiError.error).toMatchObject({ error: { type: 'api_error', message: 'The upstream answered with status 500.' } });
  });

  it('an upstream error passed through from Anthropic gets the gateway’s id, not the upstream’s', async () => {
    h.upstreams.anthropic.fake.reply({ error: { status: 529, message: 'Overloaded', type: 'overloaded_error' } });
    const apiError = await expectRequestId(h.anthropic.messages.create({ model: 'claude', max_tokens: 10, messages: question }), 529);
    expect(apiError.error).toMatchObject({ error: { type: 'overloaded_error' } });
  });

  it('in the middle of a stream: a translated upstream’s error event, and the gateway’s own when an upstream is cut', async () => {
    h.upstreams.chat.fake.reply({
      text: ['Once', ' upon', ' a time'],
      streamError: { after: THROUGH_SECOND_DELTA.chat, message: 'Overloaded', type: 'server_overloaded' },
    });
    await expectRequestId(h.anthropic.messages.stream({ model: 'gpt-chat', max_tokens: 10, messages: question }).finalMessage(), undefined);
    h.upstreams.anthropic.fake.reply({ text: ['Once', ' upon', ' a time'], cutAfter: THROUGH_SECOND_DELTA.anthropic });
    await expectRequestId(h.anthropic.messages.stream({ model: 'claude', max_tokens: 10, messages: question }).finalMessage(), undefined);
  });

  it('in the middle of a passed-through stream: the Anthropic upstream’s error event, its request_id replaced by the gateway’s', async () => {
    h.upstreams.anthropic.fake.reply({
      text: ['Once', ' upon', ' a time'],
      streamError: { after: THROUGH_SECOND_DELTA.anthropic, message: 'Overloaded', type: 'overloaded_error' },
    });
    const deltas: string[] = [];
    const stream = h.anthropic.messages.stream({ model: 'claude', max_tokens: 10, messages: question });
    stream.on('text', (delta) => deltas.push(delta));
    const apiError = await expectRequestId(stream.finalMessage(), undefined);
    // The rest of the upstream's event as it sent it; the frames before it byte for byte.
    expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(deltas.join('')).toBe('Once upon');
  });
});
