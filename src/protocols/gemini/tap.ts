import { parseObject } from '../../json.js';
import type { StreamTap } from '../codec.js';
import { sseData } from '../sse-frame.js';
import { geminiErrorBody } from './style.js';
import { fromGeminiUsage } from './usage.js';

/**
 * A Gemini stream as the passthrough path reads it: usage in `usageMetadata` (cumulative, on
 * many chunks), the end at the chunk with a `finishReason`, an error as a `{"error":…}` chunk.
 */
export const geminiTap: StreamTap = {
  protocol: 'gemini',
  marker: /"(?:usageMetadata|finishReason|error)"/g,
  observe(_event, data) {
    const json = parseObject(data);
    if (!json) return {};
    if (json.error) return { terminal: true, failed: true };
    const candidate = Array.isArray(json.candidates) ? (json.candidates[0] as { finishReason?: unknown } | undefined) : undefined;
    const terminal = typeof candidate?.finishReason === 'string' ? { terminal: true } : {};
    const responseId = typeof json.responseId === 'string' ? { responseId: json.responseId } : {};
    return json.usageMetadata ? { ...terminal, ...responseId, usage: fromGeminiUsage(json.usageMetadata) } : { ...terminal, ...responseId };
  },
  usageOfJson: (json) => fromGeminiUsage((json as { usageMetadata?: unknown } | null)?.usageMetadata),
  errorFrame: (error) => sseData(geminiErrorBody(error)),
};
