import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import type { FakeGemini } from '../upstreams/google-harness.js';
import type { FakeUpstream } from '../fakes/fake-server.js';
import { type Harness, startHarness } from '../upstreams/harness.js';
import { type GuardedClient, type GuardedDriver, guardedDrivers } from './guarded-drivers.js';

/** An e-mail address and an API-key-shaped secret (a GitHub token): what the guardrails look for. */
export const EMAIL = 'jane.doe@example.com';
export const SECRET = 'ghp_Z7kQ2mW9xV4bN8cR1tY6uP3sL5dF0gH8jK2a';
/** The secrets detector's category for it. */
export const SECRET_CATEGORY = 'github_token';

export const PII_GUARDRAIL = 'no-pii';
export const SECRETS_GUARDRAIL = 'no-secrets';

/** Keys: with only the gateway's guardrails (mask both), and with the secrets one replaced by a block on one side. */
export const MASK_KEY = 'sk-test';
export const BLOCK_INPUT_KEY = 'sk-block-input';
export const BLOCK_OUTPUT_KEY = 'sk-block-output';
/** Both guardrails replaced by `monitor` ones: found values are reported, never changed. */
export const MONITOR_KEY = 'sk-monitor';

export type Deployment = 'passthrough' | 'translated';

type UpstreamName = 'chat' | 'responses' | 'anthropic' | 'gemini';

/** One cell of the matrix: a client protocol on a model whose upstream speaks it (passthrough) or another protocol. */
export interface Cell {
  client: GuardedClient;
  deployment: Deployment;
  model: string;
  /** The strict fake behind the model, which records what it received (`GuardrailMatrix.fakes`). */
  upstream: UpstreamName;
}

export const CELLS: readonly Cell[] = [
  { client: 'chat', deployment: 'passthrough', model: 'gpt-chat', upstream: 'chat' },
  { client: 'chat', deployment: 'translated', model: 'claude', upstream: 'anthropic' },
  { client: 'responses', deployment: 'passthrough', model: 'gpt-resp', upstream: 'responses' },
  { client: 'responses', deployment: 'translated', model: 'gpt-chat', upstream: 'chat' },
  { client: 'messages', deployment: 'passthrough', model: 'claude', upstream: 'anthropic' },
  { client: 'messages', deployment: 'translated', model: 'gpt-chat', upstream: 'chat' },
  { client: 'gemini', deployment: 'passthrough', model: 'gem-25', upstream: 'gemini' },
  { client: 'gemini', deployment: 'translated', model: 'claude', upstream: 'anthropic' },
];

export interface GuardrailMatrix {
  h: Harness;
  fakes: Record<UpstreamName, FakeUpstream> & { gemini: FakeGemini };
  drivers: Record<GuardedClient, GuardedDriver>;
  reset(): void;
  close(): Promise<void>;
}

/**
 * The harness's upstreams (an OpenAI Chat server, a Responses server, the Messages API) and a
 * Gemini API, behind one gateway that masks e-mails and secrets in both directions for every
 * request (`policies.guardrails`), with two keys whose own secrets guardrail (same name) blocks
 * instead, one on the prompt and one on the answer.
 */
export async function startGuardrailMatrix(): Promise<GuardrailMatrix> {
  const gemini = await startFakeGemini();
  const h = await startHarness({
    providers: () => ({ google: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }) }),
    models: [
      { id: 'gem-25', provider: 'google', upstreamModel: 'gemini-2.5-flash' },
      // Gemini 3 signs its calls and refuses a follow-up turn without the signature it issued.
      { id: 'gem-3', provider: 'google', upstreamModel: 'gemini-3-pro-preview' },
    ],
    gateway: {
      keys: [
        { key: MASK_KEY },
        { key: BLOCK_INPUT_KEY, guardrails: [{ name: SECRETS_GUARDRAIL, type: 'secrets', action: 'block', phase: 'input' }] },
        { key: BLOCK_OUTPUT_KEY, guardrails: [{ name: SECRETS_GUARDRAIL, type: 'secrets', action: 'block', phase: 'output' }] },
        {
          key: MONITOR_KEY,
          guardrails: [
            { name: SECRETS_GUARDRAIL, type: 'secrets', action: 'monitor' },
            { name: PII_GUARDRAIL, type: 'pii', action: 'monitor' },
          ],
        },
      ],
      policies: {
        guardrails: [
          { name: SECRETS_GUARDRAIL, type: 'secrets', action: 'mask' },
          { name: PII_GUARDRAIL, type: 'pii', action: 'mask', categories: ['email'] },
        ],
      },
    },
  });
  const { chat, responses, anthropic } = h.upstreams;
  return {
    h,
    fakes: { chat: chat.fake, responses: responses.fake, anthropic: anthropic.fake, gemini },
    drivers: guardedDrivers(h.url),
    reset() {
      h.reset();
      gemini.reset();
    },
    async close() {
      await h.close();
      await gemini.close();
    },
  };
}

/**
 * `text` in pieces of `size` characters: an upstream's small deltas, cut inside the values (never
 * inside a character, as an upstream's tokens never split one).
 */
export function inPieces(text: string, size: number): string[] {
  const characters = Array.from(text);
  const pieces: string[] = [];
  for (let at = 0; at < characters.length; at += size) pieces.push(characters.slice(at, at + size).join(''));
  return pieces;
}

/** The parts of `value` longer than 3 characters that `text` holds (none when nothing leaked). */
export function leakedParts(text: string, value: string): string[] {
  const parts: string[] = [];
  for (let at = 0; at + 4 <= value.length; at++) if (text.includes(value.slice(at, at + 4))) parts.push(value.slice(at, at + 4));
  return parts;
}
