import { createLocalProvider, createOpenAIProvider, localModels, type GatewayOptions } from 'infergate';

export interface ExampleOptions {
  /** An OpenAI-compatible upstream (base URL with `/v1`) whose models are served next to the offline local ones. */
  upstream?: { baseURL: string; apiKey?: string | undefined; models: readonly string[] } | undefined;
}

/** The offline local models, plus the upstream's when one is given. */
export function exampleCatalog(options: ExampleOptions = {}): Pick<GatewayOptions, 'providers' | 'models'> {
  const providers: NonNullable<GatewayOptions['providers']> = { local: createLocalProvider() };
  const models = localModels('local');
  if (options.upstream) {
    const { baseURL, apiKey, models: ids } = options.upstream;
    providers.upstream = createOpenAIProvider({ baseURL, apiKey });
    for (const id of ids) models.push({ id, provider: 'upstream' });
  }
  return { providers, models };
}

/**
 * `OPENAI_BASE_URL` (with `/v1`), `OPENAI_API_KEY` and `OPENAI_MODELS` (comma-separated ids) put
 * a real upstream behind an example; without them it serves the local models only.
 */
export function optionsFromEnv(env: Record<string, string | undefined> = process.env): ExampleOptions {
  const baseURL = env.OPENAI_BASE_URL;
  if (!baseURL) return {};
  const models = (env.OPENAI_MODELS ?? 'gpt-4.1-mini')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  return { upstream: { baseURL, models, apiKey: env.OPENAI_API_KEY || undefined } };
}
