import { isRecord } from '../../json.js';
import type { StorageUriCheck } from '../storage-uris.js';

/**
 * Each `source.url` of a Messages body's content blocks (tool results' own blocks included),
 * through `check`: what a cloud that serves Claude (Bedrock, Vertex AI) receives on passthrough is
 * held to the same cloud-storage rule as a translated request.
 */
export function checkSourceUris(body: Record<string, unknown>, check: StorageUriCheck): void {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  messages.forEach((message, i) => {
    const blocks = isRecord(message) && Array.isArray(message.content) ? message.content : [];
    blocks.forEach((block, j) => {
      const at = `messages[${i}].content[${j}]`;
      checkBlock(block, at, check);
      const inner = isRecord(block) && Array.isArray(block.content) ? block.content : [];
      inner.forEach((nested, k) => {
        checkBlock(nested, `${at}.content[${k}]`, check);
      });
    });
  });
}

function checkBlock(block: unknown, param: string, check: StorageUriCheck): void {
  const source = isRecord(block) ? block.source : undefined;
  if (isRecord(source) && typeof source.url === 'string') check(source.url, `${param}.source.url`);
}
