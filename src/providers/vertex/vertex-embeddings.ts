import { upstreamInvalidResponse } from '../../errors.js';
import { isRecord } from '../../json.js';
import { textInputs } from '../embedding-inputs.js';
import type { EmbeddingVector } from '../media.js';
import { CALLS_IN_FLIGHT, mapLimited } from '../http/map-limited.js';
import type { CallContext, EmbeddingCapability } from '../provider.js';

/**
 * Vertex AI's text embeddings (`publishers/google/models/{m}:predict`): one instance per text
 * (`content`, with `task_type` when a Gemini client gave one), `dimensions` as
 * `parameters.outputDimensionality`. Vertex counts the tokens of each instance
 * (`statistics.token_count`), which become the usage. `gemini-embedding-*` models take one
 * instance a request, the older text-embedding models up to 250 (Google's limits); the calls go
 * 8 at a time, and the first failure ends them all.
 */
export function vertexEmbeddings(predict: (model: string, body: unknown, call: CallContext) => Promise<unknown>): EmbeddingCapability {
  return {
    async embed(request, call) {
      const texts = textInputs(request.input, call.model);
      const model = request.model;
      const size = model.includes('gemini-embedding') ? 1 : 250;
      const batches: string[][] = [];
      for (let start = 0; start < texts.length; start += size) batches.push(texts.slice(start, start + size));
      const taskType = typeof request.task_type === 'string' ? { task_type: request.task_type } : {};
      const parameters = request.dimensions !== undefined ? { parameters: { outputDimensionality: request.dimensions } } : {};
      const answers = await mapLimited(batches, CALLS_IN_FLIGHT, call.signal, (batch, signal) =>
        predict(model, { instances: batch.map((content) => ({ content, ...taskType })), ...parameters }, { ...call, signal }),
      );
      const data: EmbeddingVector[] = [];
      let tokens = 0;
      answers.forEach((answer, batch) => {
        const predictions = isRecord(answer) && Array.isArray(answer.predictions) ? answer.predictions : [];
        if (predictions.length !== batches[batch]!.length)
          throw upstreamInvalidResponse('The upstream answered a different number of predictions than it was sent texts.');
        for (const prediction of predictions) {
          const embeddings = isRecord(prediction) && isRecord(prediction.embeddings) ? prediction.embeddings : undefined;
          const values = embeddings?.values;
          if (!Array.isArray(values) || !values.every((value) => typeof value === 'number')) {
            throw upstreamInvalidResponse(`The upstream's prediction ${data.length} has no embedding values.`);
          }
          const statistics = isRecord(embeddings!.statistics) ? embeddings!.statistics : {};
          if (typeof statistics.token_count === 'number') tokens += statistics.token_count;
          data.push({ index: data.length, embedding: values });
        }
      });
      return { data, usage: { prompt_tokens: tokens } };
    },
  };
}
