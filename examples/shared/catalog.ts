import { createLocalProvider, createOpenAIProvider, localModels, type GatewayOptions } from 'infergate';

export interface ExampleOptions {
  /** An OpenAI-compatible upstream (base URL with `/v1`) whose models are served next to the offline local ones. */
  upstream?: { baseURL: string; apiKey?: string | undefined; models: readonly string[] } | undefined;
  /** A Streamable HTTP MCP server whose tools are served at the gateway's `/mcp`, as `tools__<tool>`. */
  mcpServerUrl?: string | undefined;
}

/** The offline local models, plus the upstream's when one is given; the MCP server at `/mcp` when one is given. */
export function exampleCatalog(options: ExampleOptions = {}): Pick<GatewayOptions, 'providers' | 'models' | 'mcp'> {
  const providers: NonNullable<GatewayOptions['providers']> = { local: createLocalProvider() };
  const models = localModels('local');
  if (options.upstream) {
    const { baseURL, apiKey, models: ids } = options.upstream;
    providers.upstream = createOpenAIProvider({ baseURL, apiKey });
    for (const id of ids) models.push({ id, provider: 'upstream' });
  }
  return { providers, models, ...(options.mcpServerUrl ? { mcp: { servers: { tools: { url: options.mcpServerUrl } } } } : {}) };
}

/**
 * `OPENAI_BASE_URL` (with `/v1`), `OPENAI_API_KEY` and `OPENAI_MODELS` (comma-separated ids) put
 * a real upstream behind an example; without them it serves the local models only.
 * `MCP_SERVER_URL` serves that MCP server's tools at `/mcp`.
 */
export function optionsFromEnv(env: Record<string, string | undefined> = process.env): ExampleOptions {
  const mcp = env.MCP_SERVER_URL ? { mcpServerUrl: env.MCP_SERVER_URL } : {};
  const baseURL = env.OPENAI_BASE_URL;
  if (!baseURL) return mcp;
  const models = (env.OPENAI_MODELS ?? 'gpt-4.1-mini')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  return { upstream: { baseURL, models, apiKey: env.OPENAI_API_KEY || undefined }, ...mcp };
}
