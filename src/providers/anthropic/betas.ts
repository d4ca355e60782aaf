/**
 * The `anthropic-beta` values a client's request may turn on at Anthropic by default: betas that
 * change only how that one request is served (thinking, context, tools described in the request,
 * output limits, caching of the request's own prompt), among them every beta Claude Code sends.
 *
 * Left out are the betas that reach what the operator's Anthropic account holds beyond the
 * request, which a tenant of the gateway must not touch through the operator's key: the Files API
 * (`files-api-…`: file ids of the account), Agent Skills (`skills-…`), code execution
 * (`code-execution-…`: containers that later requests reuse by id), the MCP connector
 * (`mcp-client-…`) and any beta not listed. The provider's `betas` replaces this list, or
 * forwards every beta (`'all'`).
 */
export const ANTHROPIC_BETAS: readonly string[] = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'dev-full-thinking-2025-05-14',
  'context-management-2025-06-27',
  'context-1m-2025-08-07',
  'model-context-window-exceeded-2025-08-26',
  'mid-conversation-tool-changes-2026-07-01',
  'thinking-token-count-2026-05-13',
  'advanced-tool-use-2025-11-20',
  'effort-2025-11-24',
  'fine-grained-tool-streaming-2025-05-14',
  'token-efficient-tools-2025-02-19',
  'tool-search-tool-2025-10-19',
  'tool-examples-2025-10-29',
  'structured-outputs-2025-11-13',
  'output-128k-2025-02-19',
  'prompt-caching-2024-07-31',
  'extended-cache-ttl-2025-04-11',
  'token-counting-2024-11-01',
  'pdfs-2024-09-25',
  'search-results-2025-06-09',
  'web-fetch-2025-09-10',
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'computer-use-2025-11-24',
];
