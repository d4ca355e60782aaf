import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCacheHarness, type CacheHarness, type UpstreamName } from './cache-harness.js';
import { ask, type ClientProtocol } from './sdk-clients.js';

/**
 * A hit replays the stored answer in the client's protocol, whichever path the miss took
 * (passthrough to an upstream of the same protocol, or translation), and whichever way each was
 * asked (JSON or stream): the official SDKs' stream helpers assemble the replayed stream.
 */
let harness: CacheHarness;
beforeAll(async () => {
  harness = await startCacheHarness();
});
afterAll(() => harness.close());
beforeEach(() => harness.reset());

const CELLS: [ClientProtocol, UpstreamName, string][] = [
  ['chat', 'chat', 'passthrough'],
  ['chat', 'anthropic', 'translated'],
  ['responses', 'responses', 'passthrough'],
  ['responses', 'chat', 'translated'],
  ['messages', 'anthropic', 'passthrough'],
  ['messages', 'responses', 'translated'],
];

const WAYS: [string, boolean, boolean][] = [
  ['JSON miss, stream hit', false, true],
  ['stream miss, JSON hit', true, false],
  ['stream miss, stream hit', true, true],
];

describe.each(CELLS)('%s client × %s upstream (%s)', (client, upstream) => {
  it.each(WAYS)('%s: the same answer and usage, one upstream call', async (_name, missStreams, hitStreams) => {
    const prompt = `what is the capital of France? (${client}, ${upstream}, ${String(missStreams)}, ${String(hitStreams)})`;
    harness.fakes[upstream].reply({ text: ['Paris', ' is', ' the capital.'], usage: { input: 21, output: 7 } });
    const miss = await ask(harness, client, upstream, prompt, { stream: missStreams });
    const hit = await ask(harness, client, upstream, prompt, { stream: hitStreams });
    expect(harness.fakes[upstream].accepted()).toHaveLength(1);
    expect(miss).toEqual({ text: 'Paris is the capital.', toolCalls: [], finish: expect.any(String), usage: { input: 21, output: 7 } });
    expect(hit).toEqual(miss);
  });

  it('a tool call the client runs is cached and replayed with its arguments', async () => {
    const prompt = `weather in Paris? (${client}, ${upstream})`;
    harness.fakes[upstream].reply({ toolCalls: [{ name: 'get_weather', args: ['{"city":', '"Paris"}'] }], usage: { input: 30, output: 9 } });
    const miss = await ask(harness, client, upstream, prompt, { stream: true, tools: true });
    const hit = await ask(harness, client, upstream, prompt, { stream: false, tools: true });
    const again = await ask(harness, client, upstream, prompt, { stream: true, tools: true });
    expect(harness.fakes[upstream].accepted()).toHaveLength(1);
    expect(miss.toolCalls).toEqual([{ name: 'get_weather', arguments: { city: 'Paris' } }]);
    expect(hit).toEqual(miss);
    expect(again).toEqual(miss);
  });
});
