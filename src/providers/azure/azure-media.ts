import type { UpstreamClient } from '../http/upstream-client.js';
import { openAIEmbeddings } from '../openai/openai-embeddings.js';
import { openAIImages } from '../openai/openai-images.js';
import { openAISpeech } from '../openai/openai-speech.js';
import { openAITranscriptions } from '../openai/openai-transcriptions.js';
import type { Provider } from '../provider.js';

/**
 * Azure's media calls are OpenAI's, each sent through the client of the request's deployment
 * (`/deployments/{d}/embeddings?api-version=…`, or `/v1/embeddings` on the v1 API): the OpenAI
 * code is built around that client per call, a few closures. Embeddings, images and edits,
 * speech and transcriptions; videos stay out (Azure's Sora jobs are another API).
 */
export function azureMedia(clientFor: (model: string) => UpstreamClient): Pick<Provider, 'images' | 'speech' | 'embeddings' | 'transcriptions'> {
  return {
    images: {
      generate: (request, call) => openAIImages(clientFor(request.model)).generate!(request, call),
      edit: (request, call) => openAIImages(clientFor(request.fields.model)).edit!(request, call),
    },
    speech: { synthesize: (request, call) => openAISpeech(clientFor(request.model)).synthesize(request, call) },
    embeddings: { embed: (request, call) => openAIEmbeddings(clientFor(request.model)).embed(request, call) },
    transcriptions: { transcribe: (request, call) => openAITranscriptions(clientFor(request.fields.model)).transcribe(request, call) },
  };
}
