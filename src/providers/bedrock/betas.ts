import { invalidRequest } from '../../errors.js';
import type { PassthroughRequest } from '../provider.js';

/**
 * The `anthropic-beta` values Bedrock's Claude accepts (AWS's model-parameters page for the
 * Anthropic Messages API). Bedrock answers 400 "invalid beta flag" to any other value, where
 * Anthropic's own API ignores or accepts it; clients such as Claude Code send betas Bedrock does
 * not have (`mcp-servers-…`, `structured-outputs-…`), so the rest are dropped, not forwarded
 * (LiteLLM #20021 is what forwarding them does). The config's `betas` replaces this list.
 */
export const BEDROCK_BETAS: readonly string[] = [
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
  'token-efficient-tools-2025-02-19',
  'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19',
  'dev-full-thinking-2025-05-14',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'tool-search-tool-2025-10-19',
  'tool-examples-2025-10-29',
];

/**
 * The betas a Messages client asked for, in its `anthropic-beta` header and its body's own
 * `anthropic_beta` array, as Bedrock's `anthropic_beta` body array: the allowed values (all
 * without a list), each once. Both ways are filtered alike, so the body is no way around the list.
 */
export function bedrockBetas(request: Pick<PassthroughRequest, 'headers' | 'body'>, allowed: ReadonlySet<string> | undefined): string[] {
  const kept = new Set<string>();
  for (const value of [...(request.headers.get('anthropic-beta') ?? '').split(','), ...bodyBetas(request.body.anthropic_beta)]) {
    const beta = value.trim();
    if (beta !== '' && (!allowed || allowed.has(beta))) kept.add(beta);
  }
  return [...kept];
}

function bodyBetas(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((beta) => typeof beta !== 'string')) {
    throw invalidRequest("'anthropic_beta' must be an array of strings.", 'anthropic_beta');
  }
  return value as string[];
}
