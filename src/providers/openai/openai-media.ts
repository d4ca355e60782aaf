import type { UpstreamClient } from '../http/upstream-client.js';
import type { Provider } from '../provider.js';
import { openAIEmbeddings } from './openai-embeddings.js';
import { openAIImages } from './openai-images.js';
import { openAISpeech } from './openai-speech.js';
import { openAITranscriptions } from './openai-transcriptions.js';
import { openAIVideos } from './openai-videos.js';

/** The media calls of an OpenAI-compatible upstream: images, edits, speech, videos, embeddings and transcriptions. */
export function openAIMedia(client: UpstreamClient): Pick<Provider, 'images' | 'speech' | 'video' | 'embeddings' | 'transcriptions'> {
  return {
    images: openAIImages(client),
    speech: openAISpeech(client),
    video: openAIVideos(client),
    embeddings: openAIEmbeddings(client),
    transcriptions: openAITranscriptions(client),
  };
}
