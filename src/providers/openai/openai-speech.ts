import { upstreamChunks, type UpstreamClient } from '../http/upstream-client.js';
import { upstreamError } from '../http/upstream-error.js';
import type { SpeechCapability } from '../provider.js';

/**
 * OpenAI's `POST /audio/speech`: the client's body goes on as it came (only `model` mapped) and
 * the audio bytes are piped back as they arrive.
 */
export function openAISpeech(client: UpstreamClient): SpeechCapability {
  return {
    async synthesize(request, call) {
      const result = await client.post('/audio/speech', JSON.stringify(request), {
        signal: call.signal,
        idleTimeoutMs: call.idleTimeoutMs,
        upstreamWait: call.upstreamWait,
        headers: { accept: 'application/octet-stream' },
      });
      if (result.status >= 400) throw await upstreamError(result);
      return upstreamChunks(result.body);
    },
  };
}
