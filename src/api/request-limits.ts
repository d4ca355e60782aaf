import { GatewayError } from '../errors.js';
import type { TextProtocol } from '../protocols/ir.js';

/**
 * Refuses a text request with more than `limit` messages (Responses: `input` items; Gemini: `contents`), or more
 * than `limit` content blocks across them, with a 400 naming `messages` / `input`. Every item
 * costs work in validation and in each translation, all of it synchronous: a 32 MB body of tiny
 * messages would otherwise hold the event loop for seconds. Runs on the parsed body before it is
 * validated, so it reads it defensively; a malformed field is left for validation to report.
 */
export function checkItemCount(protocol: TextProtocol, body: Record<string, unknown>, limit: number): void {
  const param = protocol === 'responses' ? 'input' : protocol === 'gemini' ? 'contents' : 'messages';
  const items = body[param];
  if (!Array.isArray(items)) return;
  const noun = protocol === 'responses' ? 'input items' : protocol === 'gemini' ? 'contents' : 'messages';
  if (items.length > limit) {
    throw tooMany(param, `Too many ${noun}: ${items.length}; this gateway accepts at most ${limit} in one request.`);
  }
  let blocks = protocol === 'messages' && Array.isArray(body.system) ? body.system.length : 0;
  for (const item of items) {
    blocks += blocksOf(item);
    if (blocks > limit) {
      throw tooMany(param, `Too many content blocks in '${param}': more than ${limit}, the most this gateway accepts in one request.`);
    }
  }
}

/**
 * Content blocks of one message or item: its `content` parts (and those nested in Anthropic tool
 * results), or the parts of a Responses tool output.
 */
function blocksOf(item: unknown): number {
  if (typeof item !== 'object' || item === null) return 0;
  const { content, output, parts } = item as { content?: unknown; output?: unknown; parts?: unknown };
  let count = Array.isArray(output) ? output.length : 0;
  // Gemini's turns hold `parts`.
  if (Array.isArray(parts)) count += parts.length;
  if (!Array.isArray(content)) return count;
  count += content.length;
  for (const block of content) {
    const inner = typeof block === 'object' && block !== null ? (block as { content?: unknown }).content : undefined;
    if (Array.isArray(inner)) count += inner.length;
  }
  return count;
}

function tooMany(param: string, message: string): GatewayError {
  return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'too_many_items', param, message });
}
