import type { GatewayError } from '../errors.js';
import { parseObject } from '../json.js';
import type { IRUsage, TextProtocol } from './ir.js';
import { anthropicErrorType } from './messages/error-type.js';
import { sseData, sseEvent } from './sse-frame.js';
import { fromChatUsage, fromMessagesUsage, fromResponsesUsage } from './usage.js';

/**
 * What the passthrough path needs to know of a protocol's stream without re-encoding it: where
 * usage is, which event ends it, and how to append an error.
 */
export interface StreamTap {
  protocol: TextProtocol;
  /**
   * Reads one SSE message; cheap checks first, so most chunks are never JSON-parsed here.
   * `failed` marks a terminal error event: the stream ends as the protocol says, but the request
   * failed (and is reported so).
   */
  observe(event: string | undefined, data: string): { usage?: IRUsage; terminal?: boolean; failed?: boolean; responseId?: string };
  usageOfJson(json: unknown): IRUsage;
  errorFrame(error: GatewayError): string;
}

const USAGE_OBJECT = /"usage"\s*:\s*\{/;
const FINISH_REASON = /"finish_reason"\s*:\s*"/;
/** A key (not a string's text, where its quotes would be escaped). */
const ERROR_KEY = /"error"\s*:/;

export const chatTap: StreamTap = {
  protocol: 'chat',
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

const RESPONSES_TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export const responsesTap: StreamTap = {
  protocol: 'responses',
  observe(event, data) {
    const type = event ?? (parseObject(data)?.type as string | undefined);
    if (!type || !RESPONSES_TERMINAL.has(type)) return {};
    if (type === 'error') return { terminal: true, failed: true };
    const response = parseObject(data)?.response as { usage?: unknown; id?: unknown } | undefined;
    return {
      terminal: true,
      ...(type === 'response.failed' ? { failed: true } : {}),
      ...(response?.usage ? { usage: fromResponsesUsage(response.usage) } : {}),
      ...(typeof response?.id === 'string' ? { responseId: response.id } : {}),
    };
  },
  usageOfJson: (json) => fromResponsesUsage((json as { usage?: unknown })?.usage),
  errorFrame: (error) =>
    sseEvent('error', {
      type: 'error',
      sequence_number: 0,
      error: { type: error.type, code: error.code ?? error.type, message: error.message, param: error.param },
    }),
};

export const messagesTap: StreamTap = {
  protocol: 'messages',
  observe(event, data) {
    if (event === 'message_stop') return { terminal: true };
    if (event === 'error') return { terminal: true, failed: true };
    if (event === 'message_start') {
      const message = parseObject(data)?.message as { usage?: unknown } | undefined;
      return message?.usage ? { usage: fromMessagesUsage(message.usage) } : {};
    }
    if (event === 'message_delta') {
      const usage = parseObject(data)?.usage;
      return usage ? { usage: fromMessagesUsage(usage) } : {};
    }
    return {};
  },
  usageOfJson: (json) => fromMessagesUsage((json as { usage?: unknown })?.usage),
  errorFrame: (error) => sseEvent('error', { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } }),
};
