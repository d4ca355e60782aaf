import { upstreamInvalidResponse } from '../../errors.js';
import { isRecord } from '../../json.js';
import { encodingFor, TokenCounter } from '../../tokens/tokenizer.js';
import { textInputs } from '../embedding-inputs.js';
import { postJson } from '../http/json-call.js';
import { CALLS_IN_FLIGHT, mapLimited } from '../http/map-limited.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import type { EmbeddingVector } from '../media.js';
import type { EmbeddingCapability } from '../provider.js';

/** Most requests one `batchEmbedContents` call takes (Google's limit); larger inputs go in several calls, 8 at a time. */
const BATCH_SIZE = 100;

/**
 * Gemini's `models/{m}:batchEmbedContents`: one request per text (`content.parts[].text`),
 * `dimensions` as `outputDimensionality`, `taskType` when a Gemini client gave one (else the model's default). Gemini embeds
 * text only (a token array is a 400 naming `input`) and reports no token counts, so usage is
 * counted with the gateway's tokenizer: an estimate.
 */
export function geminiEmbeddings(client: UpstreamClient, prefix: string): EmbeddingCapability {
  return {
    async embed(request, call) {
      const texts = textInputs(request.input, call.model);
      const model = request.model;
      const path = `${prefix}/models/${encodeURIComponent(model)}:batchEmbedContents`;
      const batches: string[][] = [];
      for (let start = 0; start < texts.length; start += BATCH_SIZE) batches.push(texts.slice(start, start + BATCH_SIZE));
      const answers = await mapLimited(batches, CALLS_IN_FLIGHT, call.signal, (batch, signal) =>
        postJson(
          client,
          path,
          {
            requests: batch.map((text) => ({
              model: `models/${model}`,
              content: { parts: [{ text }] },
              ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}),
              ...(typeof request.task_type === 'string' ? { taskType: request.task_type } : {}),
            })),
          },
          { ...call, signal },
        ),
      );
      const data: EmbeddingVector[] = [];
      answers.forEach((answer, batch) => {
        const embeddings = isRecord(answer) && Array.isArray(answer.embeddings) ? answer.embeddings : [];
        if (embeddings.length !== batches[batch]!.length)
          throw upstreamInvalidResponse('The upstream answered a different number of embeddings than it was sent texts.');
        for (const embedding of embeddings) {
          const values = isRecord(embedding) ? embedding.values : undefined;
          if (!Array.isArray(values) || !values.every((value) => typeof value === 'number')) {
            throw upstreamInvalidResponse(`The upstream embeddings answer has no values at embeddings[${data.length - batch * BATCH_SIZE}].`);
          }
          data.push({ index: data.length, embedding: values });
        }
      });
      const counter = await TokenCounter.open(encodingFor(model));
      let tokens = 0;
      for (const text of texts) tokens += await counter.count(text);
      return { data, usage: { prompt_tokens: tokens } };
    },
  };
}
