import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GuardrailOutcome } from '../../src/guardrails/checker.js';
import type { UsageEvent } from '../../src/options.js';
import {
  BLOCK_INPUT_KEY,
  BLOCK_OUTPUT_KEY,
  type Cell,
  CELLS,
  EMAIL,
  type GuardrailMatrix,
  inPieces,
  leakedParts,
  MASK_KEY,
  MONITOR_KEY,
  PII_GUARDRAIL,
  SECRET,
  SECRET_CATEGORY,
  SECRETS_GUARDRAIL,
  startGuardrailMatrix,
} from './matrix-harness.js';
import { toolExchangeByName } from '../upstreams/harness.js';

/**
 * Issue 26's matrix: every client protocol through its official SDK, on a deployment that speaks
 * it (passthrough) and one that does not (translated), JSON and streamed, with the gateway's
 * guardrails masking e-mails and secrets, and keys that block secrets instead.
 */
let m: GuardrailMatrix;
beforeAll(async () => {
  m = await startGuardrailMatrix();
});
afterAll(() => m?.close());
beforeEach(() => m.reset());

const PROMPT = `Mail ${EMAIL} the report; my key is ${SECRET}.`;
const MASKED_PROMPT = `Mail [REDACTED:email] the report; my key is [REDACTED:${SECRET_CATEGORY}].`;
const CLEAN_PROMPT = 'Whom should I write to?';
/**
 * An answer holding both values, which the fakes send in 5-character deltas (cut inside each
 * value); characters outside the BMP before them, so a mask's UTF-16 offsets show when wrong.
 */
const ANSWER = `👋 Bonjour ! Write to ${EMAIL} 📧 and use the token ${SECRET} for the API.`;
/**
 * A long answer (about 18,000 characters), each value some 6,000 characters after the one before,
 * well past what a detector holds back (the longest secret shape, a private key block, is about
 * 4,100 characters): a stream's window is released in parts, and may be cut near a value.
 */
const FILLER = 'lorem ipsum dolor sit amet, '.repeat(220);
/** The long answer's deltas: the filler in large ones, each value's sentence in 4-character ones. */
const LONG_ANSWER_DELTAS = [FILLER, `Write to ${EMAIL}. `, FILLER, `The token is ${SECRET}. `, FILLER].flatMap((part) =>
  inPieces(part, part.includes(EMAIL) || part.includes(SECRET) ? 4 : 500),
);
const LONG_ANSWER = LONG_ANSWER_DELTAS.join('');
/** Tool-call arguments holding both values, sent in 6-character fragments. */
const ARGUMENTS = JSON.stringify({ to: EMAIL, body: `Use ${SECRET}` });

const MASK = new RegExp(String.raw`\[REDACTED:(?:email|${SECRET_CATEGORY})\]`, 'g');
/** `text` with each mask as `<masked>`: compared with the original, nothing else may have changed. */
const masksShown = (text: string) => text.replace(MASK, '<masked>');
const valuesHidden = (text: string) => text.replace(EMAIL, '<masked>').replace(SECRET, '<masked>');

/** No value whole in `text`, and no delta holding more than 3 characters of one. */
function expectNoLeak(text: string, deltas: readonly string[]): void {
  expect(text).not.toContain(EMAIL);
  expect(text).not.toContain(SECRET);
  for (const delta of deltas) expect({ delta, leaked: [...leakedParts(delta, EMAIL), ...leakedParts(delta, SECRET)] }).toEqual({ delta, leaked: [] });
}

/** The request's usage event, which must name no value. */
async function usageEvent(): Promise<UsageEvent> {
  await expect.poll(() => m.h.usage.length).toBe(1);
  const event = m.h.usage[0]!;
  const serialized = JSON.stringify(event);
  expect(serialized).not.toContain(EMAIL);
  expect(serialized).not.toContain(SECRET);
  return event;
}

function outcome(guardrail: string, phase: 'input' | 'output', action: string, result: GuardrailOutcome['outcome'], categories: unknown = expect.any(Array)) {
  return expect.objectContaining({ guardrail, phase, action, outcome: result, categories });
}

/** What the promise was rejected with; fails when it resolved. */
function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('the SDK returned an answer where it should have thrown');
    },
    (error: unknown) => error,
  );
}

function nameOf(cell: Cell): string {
  return `${cell.client} client, ${cell.deployment} (${cell.model})`;
}

describe('a secret in a streamed Messages answer on an Anthropic passthrough', () => {
  it('is masked across chunk boundaries', async () => {
    const fake = m.fakes.anthropic;
    // The secret cut every 3 characters, so each SSE frame holds a piece of it.
    fake.reply({ text: inPieces(`Your token: ${SECRET}. Keep it safe.`, 3) });
    const answer = await m.drivers.messages.send(MASK_KEY, 'claude', CLEAN_PROMPT, true);

    expect(masksShown(answer.text)).toBe('Your token: <masked>. Keep it safe.');
    expectNoLeak(answer.text, answer.deltas);
    expect(answer.deltas.length).toBeGreaterThan(0);
    const received = fake.last();
    expect(received.path).toBe('/v1/messages');
    expect(received.body.stream).toBe(true);
    const event = await usageEvent();
    expect(event.guardrails).toContainEqual(outcome(SECRETS_GUARDRAIL, 'output', 'mask', 'masked', [SECRET_CATEGORY]));
  });
});

describe('a passthrough deployment with an output guardrail', () => {
  it('still sends the client’s body and headers as they came, only the values masked', async () => {
    m.fakes.anthropic.reply({ text: inPieces(ANSWER, 5) });
    const beta = 'fine-grained-tool-streaming-2025-05-14';
    // `top_k` and `metadata`: fields the Messages API has and the IR does not carry.
    const body = { model: 'claude', max_tokens: 64, top_k: 5, metadata: { user_id: 'u-1' }, messages: [{ role: 'user' as const, content: PROMPT }] };
    const message = await m.h.anthropic.messages.create(body, { headers: { 'anthropic-beta': beta } });

    expect(masksShown(message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''))).toBe(valuesHidden(ANSWER));
    const received = m.fakes.anthropic.last();
    expect(received.body).toEqual({ ...body, model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: MASKED_PROMPT }] });
    expect(received.headers['anthropic-beta']).toBe(beta);
  });
});

describe.each(CELLS.map((cell) => [nameOf(cell), cell] as const))('%s', (_name, cell) => {
  const driver = () => m.drivers[cell.client];
  const fake = () => m.fakes[cell.upstream];

  it('masks the system prompt, an earlier call’s arguments and a tool result of a tool loop', async () => {
    const loop = { system: `Reply to ${EMAIL}.`, input: { to: EMAIL, body: 'Hi' }, result: `Sent with ${SECRET}` };
    await driver().sendToolLoop(MASK_KEY, cell.model, 'Send it', loop);

    const body = fake().last().body;
    const received = JSON.stringify(body);
    expect(received).not.toContain(EMAIL);
    expect(received).not.toContain(SECRET);
    expect(received.match(MASK)).toHaveLength(3);
    expect(received).toContain('Reply to [REDACTED:email].');
    // The arguments still parse, whether the upstream takes them as JSON text or as an object.
    expect(toolExchangeByName(cell.upstream, body)).toEqual({
      calls: [{ name: 'send_mail', input: { to: '[REDACTED:email]', body: 'Hi' } }],
      results: [{ name: 'send_mail', output: expect.stringContaining(`Sent with [REDACTED:${SECRET_CATEGORY}]`) }],
    });
    const event = await usageEvent();
    expect(event.guardrails).toEqual(
      expect.arrayContaining([
        outcome(PII_GUARDRAIL, 'input', 'mask', 'masked', ['email']),
        outcome(SECRETS_GUARDRAIL, 'input', 'mask', 'masked', [SECRET_CATEGORY]),
      ]),
    );
  });

  describe.each([
    ['JSON', false],
    ['stream', true],
  ] as const)('%s', (_mode, stream) => {
    it('masks an e-mail and a secret in the prompt before the upstream', async () => {
      await driver().send(MASK_KEY, cell.model, PROMPT, stream);

      const received = JSON.stringify(fake().last().body);
      expect(received).toContain(JSON.stringify(MASKED_PROMPT));
      expect(received.match(MASK)).toHaveLength(2);
      expect(received).not.toContain(EMAIL);
      expect(received).not.toContain(SECRET);
      if (cell.deployment === 'passthrough') expect(fake().last().body).toMatchObject(driver().extra);
      const event = await usageEvent();
      expect(event.guardrails).toEqual(
        expect.arrayContaining([
          outcome(PII_GUARDRAIL, 'input', 'mask', 'masked', ['email']),
          outcome(SECRETS_GUARDRAIL, 'input', 'mask', 'masked', [SECRET_CATEGORY]),
        ]),
      );
    });

    it('refuses a prompt holding a secret with a 400 naming the guardrail; the upstream gets nothing', async () => {
      const error = driver().errorOf(await rejection(driver().send(BLOCK_INPUT_KEY, cell.model, PROMPT, stream)));

      expect(error).toMatchObject({ status: 400, message: expect.stringContaining(SECRETS_GUARDRAIL), code: driver().blockedCode });
      expect(error.message).toContain(SECRET_CATEGORY);
      expect(error.message).not.toContain(SECRET);
      expect(error.message).not.toContain(EMAIL);
      expect(fake().requests).toEqual([]);
      const event = await usageEvent();
      expect(event.guardrails).toContainEqual(outcome(SECRETS_GUARDRAIL, 'input', 'block', 'blocked', [SECRET_CATEGORY]));
    });

    it('masks an e-mail and a secret in the answer, never showing a piece of either', async () => {
      fake().reply({ text: inPieces(ANSWER, 5) });
      const answer = await driver().send(MASK_KEY, cell.model, CLEAN_PROMPT, stream);

      expect(answer.text).toContain('[REDACTED:email]');
      expect(masksShown(answer.text)).toBe(valuesHidden(ANSWER));
      expectNoLeak(answer.text, answer.deltas);
      if (stream) expect(answer.deltas.join('')).toBe(answer.text);
      const event = await usageEvent();
      expect(event.guardrails).toHaveLength(4);
      expect(event.guardrails).toEqual(
        expect.arrayContaining([
          outcome(PII_GUARDRAIL, 'input', 'mask', 'passed', []),
          outcome(SECRETS_GUARDRAIL, 'input', 'mask', 'passed', []),
          outcome(PII_GUARDRAIL, 'output', 'mask', 'masked', ['email']),
          outcome(SECRETS_GUARDRAIL, 'output', 'mask', 'masked', [SECRET_CATEGORY]),
        ]),
      );
    });

    it('masks values far into a long answer', async () => {
      fake().reply({ text: LONG_ANSWER_DELTAS });
      const answer = await driver().send(MASK_KEY, cell.model, CLEAN_PROMPT, stream);

      expect(masksShown(answer.text)).toBe(valuesHidden(LONG_ANSWER));
      expectNoLeak(answer.text, answer.deltas);
      if (stream) expect(answer.deltas.join('')).toBe(answer.text);
    });

    it('monitors: the prompt and the answer pass unchanged, the usage event flags them without the values', async () => {
      fake().reply({ text: inPieces(ANSWER, 5) });
      const answer = await driver().send(MONITOR_KEY, cell.model, PROMPT, stream);

      expect(answer.text).toBe(ANSWER);
      expect(JSON.stringify(fake().last().body)).toContain(JSON.stringify(PROMPT));
      const event = await usageEvent();
      expect(event.guardrails).toEqual(
        expect.arrayContaining([
          outcome(PII_GUARDRAIL, 'input', 'monitor', 'flagged', ['email']),
          outcome(SECRETS_GUARDRAIL, 'input', 'monitor', 'flagged', [SECRET_CATEGORY]),
          outcome(PII_GUARDRAIL, 'output', 'monitor', 'flagged', ['email']),
          outcome(SECRETS_GUARDRAIL, 'output', 'monitor', 'flagged', [SECRET_CATEGORY]),
        ]),
      );
    });

    it('masks an e-mail and a secret in tool-call arguments, which still parse as JSON', async () => {
      fake().reply({ toolCalls: [{ name: 'send_mail', args: inPieces(ARGUMENTS, 6) }] });
      const answer = await driver().send(MASK_KEY, cell.model, CLEAN_PROMPT, stream);

      expect(answer.calls).toEqual([{ name: 'send_mail', input: { to: '[REDACTED:email]', body: `Use [REDACTED:${SECRET_CATEGORY}]` } }]);
      expectNoLeak(JSON.stringify(answer.calls), answer.deltas);
      const event = await usageEvent();
      expect(event.guardrails).toContainEqual(outcome(PII_GUARDRAIL, 'output', 'mask', 'masked', ['email']));
    });

    it(`refuses a long answer with a secret far into it${stream ? ' after streaming the text before it' : ''}`, async () => {
      fake().reply({ text: LONG_ANSWER_DELTAS });
      const deltas: string[] = [];
      const error = driver().errorOf(await rejection(driver().send(BLOCK_OUTPUT_KEY, cell.model, CLEAN_PROMPT, stream, deltas)));

      expect(error.message).toContain(SECRETS_GUARDRAIL);
      expectNoLeak(deltas.join(''), deltas);
      // A stream has begun (the filler before the secret is released) when the secret is found: its error event ends it.
      if (stream) expect(deltas.join('')).toMatch(/^lorem ipsum/);
      else expect(error).toMatchObject({ status: 400, code: driver().blockedCode });
    });

    it(`refuses an answer holding a secret${stream ? ' with the protocol’s error event: the SDK throws' : ' with a 400 naming the guardrail'}`, async () => {
      fake().reply({ text: inPieces(ANSWER, 5) });
      const deltas: string[] = [];
      const error = driver().errorOf(await rejection(driver().send(BLOCK_OUTPUT_KEY, cell.model, CLEAN_PROMPT, stream, deltas)));

      expect(error.message).toContain(SECRETS_GUARDRAIL);
      expect(error.message).toContain(SECRET_CATEGORY);
      expect(error.message).not.toContain(SECRET);
      // A JSON answer is refused whole; a stream may have started (200) before the window with the secret.
      if (!stream) expect(error).toMatchObject({ status: 400, code: driver().blockedCode });
      expectNoLeak(deltas.join(''), deltas);
      const event = await usageEvent();
      expect(event.status).toBe('error');
      expect(event.guardrails).toContainEqual(outcome(SECRETS_GUARDRAIL, 'output', 'block', 'blocked', [SECRET_CATEGORY]));
    });
  });
});
