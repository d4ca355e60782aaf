import { parseObject } from '../../json.js';
import type { StreamTap } from '../codec.js';
import { sseEvent } from '../sse-frame.js';
import { anthropicErrorBody } from './error-body.js';
import { fromMessagesUsage } from './usage.js';

export const messagesTap: StreamTap = {
  protocol: 'messages',
  marker: /message_(?:start|delta|stop)|error/g,
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
  errorFrame: (error, requestId) => sseEvent('error', anthropicErrorBody(error, requestId)),
  // The client's `request-id` header is the gateway's: the body's id must be the same.
  restampedError(data, requestId) {
    const body = parseObject(data);
    return body ? sseEvent('error', { ...body, request_id: requestId }) : undefined;
  },
};
