import { parseObject } from '../../json.js';
import type { StreamTap } from '../codec.js';
import { sseEvent } from '../sse-frame.js';
import { outputItemIdsOf } from './output-item-ids.js';
import { fromResponsesUsage } from './usage.js';

const RESPONSES_TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error']);

export const responsesTap: StreamTap = {
  protocol: 'responses',
  marker: /response\.(?:completed|incomplete|failed)|error/g,
  observe(event, data) {
    const type = event ?? (parseObject(data)?.type as string | undefined);
    if (!type || !RESPONSES_TERMINAL.has(type)) return {};
    if (type === 'error') return { terminal: true, failed: true };
    const response = parseObject(data)?.response as { usage?: unknown; id?: unknown; output?: unknown } | undefined;
    return {
      terminal: true,
      failed: type === 'response.failed',
      usage: response?.usage ? fromResponsesUsage(response.usage) : undefined,
      responseId: typeof response?.id === 'string' ? response.id : undefined,
      // The terminal event holds the whole response: its output items' ids come in the same parse.
      outputItemIds: outputItemIdsOf(response?.output),
    };
  },
  usageOfJson: (json) => fromResponsesUsage((json as { usage?: unknown })?.usage),
  outputItemIdsOfJson: (json) => outputItemIdsOf((json as { output?: unknown } | null)?.output),
  errorFrame: (error) =>
    sseEvent('error', {
      type: 'error',
      sequence_number: 0,
      error: { type: error.type, code: error.code ?? error.type, message: error.message, param: error.param },
    }),
};
