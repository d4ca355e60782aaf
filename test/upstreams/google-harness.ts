import { afterAll, beforeAll, beforeEach } from 'vitest';
import { createGeminiProvider } from '../../src/providers/gemini/gemini-provider.js';
import { createLocalProvider } from '../../src/providers/local/local-provider.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { type Harness, startHarness } from './harness.js';

export type FakeGemini = Awaited<ReturnType<typeof startFakeGemini>>;

export interface GoogleHarness {
  h: Harness;
  gemini: FakeGemini;
}

/**
 * The harness's upstreams plus the local provider and a strict fake Gemini API, for the tests of
 * Gemini clients: models `local-chat`, `gem-3` (Gemini 3) and `gem-25` (Gemini 2.5). Started
 * before the file's tests (handed to `onStart`), reset before each, closed after them.
 */
export function useGoogleHarness(onStart: (started: GoogleHarness) => void): void {
  let started: GoogleHarness | undefined;
  beforeAll(async () => {
    const gemini = await startFakeGemini();
    const h = await startHarness({
      providers: () => ({
        local: createLocalProvider({ chunkDelayMs: 0 }),
        google: createGeminiProvider({ baseURL: gemini.url, apiKey: 'up-key' }),
      }),
      models: [
        { id: 'local-chat', provider: 'local' },
        { id: 'gem-3', provider: 'google', upstreamModel: 'gemini-3-pro-preview' },
        { id: 'gem-25', provider: 'google', upstreamModel: 'gemini-2.5-flash' },
      ],
    });
    started = { h, gemini };
    onStart(started);
  });
  afterAll(async () => {
    await started?.h.close();
    await started?.gemini.close();
  });
  beforeEach(() => {
    started?.h.reset();
    started?.gemini.reset();
  });
}
