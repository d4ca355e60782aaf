import { createHash } from 'node:crypto';
import type { KeyRecord } from '../auth/key-store.js';

/** A system prompt shorter than this is not worth pinning: upstream caches start around 1,024 tokens. */
const LONG_PREFIX_CHARS = 4096;
/** Characters of the prefix hashed: enough to tell prompts apart, cheap on a 20 MB body. */
const HASHED_PREFIX_CHARS = 8192;

/**
 * The key that pins a request to one deployment, so an upstream prompt cache keeps hitting:
 * the client's `prompt_cache_key`, or else (cheaply) the caller's key plus a hash of a long
 * system prompt / instructions. Undefined when neither applies: then the choice is by weight.
 */
export function stickyKeyOf(body: Record<string, unknown>, key: KeyRecord): string | undefined {
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '') return `pck:${body.prompt_cache_key}`;
  const prefix = systemPrefix(body);
  if (prefix === undefined || prefix.length < LONG_PREFIX_CHARS) return undefined;
  return `prefix:${key.id}:${createHash('sha256').update(prefix.slice(0, HASHED_PREFIX_CHARS)).digest('base64url')}`;
}

/** The request's leading instructions in any of the three protocols, when they are text. */
function systemPrefix(body: Record<string, unknown>): string | undefined {
  if (typeof body.instructions === 'string') return body.instructions;
  if (typeof body.system === 'string') return body.system;
  if (Array.isArray(body.system)) return textOf(body.system[0]);
  const first = Array.isArray(body.messages) ? body.messages[0] : Array.isArray(body.input) ? body.input[0] : undefined;
  if (first && typeof first === 'object' && ['system', 'developer'].includes((first as { role?: string }).role ?? '')) {
    const content = (first as { content?: unknown }).content;
    return typeof content === 'string' ? content : Array.isArray(content) ? textOf(content[0]) : undefined;
  }
  return undefined;
}

function textOf(block: unknown): string | undefined {
  const text = (block as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? text : undefined;
}
