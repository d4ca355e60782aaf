import { parseObject } from '../../json.js';
import type { StreamTap } from '../codec.js';
import { sseData } from '../sse-frame.js';
import { fromChatUsage } from './usage.js';

const USAGE_OBJECT = /"usage"\s*:\s*\{/;
const FINISH_REASON = /"finish_reason"\s*:\s*"/;
/** A key (not a string's text, where its quotes would be escaped). */
const ERROR_KEY = /"error"\s*:/;

export const chatTap: StreamTap = {
  protocol: 'chat',
  // What the three patterns above and `[DONE]` find, as servers space them (none, or one space).
  marker: /\[DONE\]|"(?:error"|usage": ?\{|finish_reason": ?")/g,
  observe(_event, data) {
    if (data === '[DONE]') return { terminal: true };
    // An error frame in any spacing or key order (`{ "error": …}` from some servers); only a frame
    // with an `"error":` key is parsed, and a null `error` is none.
    if (ERROR_KEY.test(data) && parseObject(data)?.error) return { terminal: true, failed: true };
    // Some OpenAI-compatible servers end the stream after the finish chunk without `[DONE]`: the
    // answer is whole then (as the Chat decoder also holds), so a clean end there is no cut.
    const finished = FINISH_REASON.test(data) ? { terminal: true } : {};
    if (!USAGE_OBJECT.test(data)) return finished;
    const json = parseObject(data);
    return json?.usage ? { ...finished, usage: fromChatUsage(json.usage) } : finished;
  },
  usageOfJson: (json) => fromChatUsage((json as { usage?: unknown })?.usage),
  errorFrame: (error) => sseData({ error: { message: error.message, type: error.type, param: error.param, code: error.code } }),
};
