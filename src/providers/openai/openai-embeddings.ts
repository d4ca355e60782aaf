import { upstreamInvalidResponse } from '../../errors.js';
import { isRecord } from '../../json.js';
import { parseAnswer } from '../http/get-json.js';
import { readText, type UpstreamClient } from '../http/upstream-client.js';
import { upstreamError } from '../http/upstream-error.js';
import type { EmbeddingResult, EmbeddingVector } from '../media.js';
import type { EmbeddingCapability } from '../provider.js';

/** Largest embeddings answer read: 2048 inputs of 3072 dimensions in base64 are about 34 MB. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * OpenAI's `POST /embeddings`: the client's body goes on with `model` mapped, asking for base64
 * whatever the client asked (a quarter of the JSON floats' size, and exact); the gateway gives
 * the client floats or base64 as it asked. An upstream that ignores `encoding_format` and sends
 * numbers is read as well.
 */
export function openAIEmbeddings(client: UpstreamClient): EmbeddingCapability {
  return {
    async embed(request, call) {
      const result = await client.post('/embeddings', JSON.stringify({ ...request, encoding_format: 'base64' }), {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
      });
      if (result.status >= 400) throw await upstreamError(result);
      return readEmbeddings(parseAnswer(await readText(result.body, MAX_ANSWER_BYTES, result.upstreamWait), result.redact));
    },
  };
}

/** OpenAI's `{ data: [{ index, embedding }], usage }`, checked enough that the gateway can rely on it. */
function readEmbeddings(answer: unknown): EmbeddingResult {
  if (!isRecord(answer) || !Array.isArray(answer.data)) throw upstreamInvalidResponse('The upstream embeddings answer has no `data` list.');
  const data = answer.data.map((item, position): EmbeddingVector => {
    const embedding = isRecord(item) ? item.embedding : undefined;
    if (typeof embedding !== 'string' && !(Array.isArray(embedding) && embedding.every((value) => typeof value === 'number'))) {
      throw upstreamInvalidResponse(`The upstream embeddings answer has no vector at data[${position}].`);
    }
    const index = isRecord(item) && typeof item.index === 'number' ? item.index : position;
    return { index, embedding };
  });
  const usage = isRecord(answer.usage) ? answer.usage : {};
  const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  return { data, usage: { prompt_tokens: prompt, total_tokens: typeof usage.total_tokens === 'number' ? usage.total_tokens : prompt } };
}
