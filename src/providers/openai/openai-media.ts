import type { UpstreamClient } from '../http/upstream-client.js';
import type { Provider } from '../provider.js';
import { openAIImages } from './openai-images.js';
import { openAISpeech } from './openai-speech.js';
import { openAIVideos } from './openai-videos.js';

/** The media calls of an OpenAI-compatible upstream: images, edits, speech and videos. */
export function openAIMedia(client: UpstreamClient): Pick<Provider, 'images' | 'speech' | 'video'> {
  return { images: openAIImages(client), speech: openAISpeech(client), video: openAIVideos(client) };
}
