import * as v from 'valibot';
import { dateLabel, flag, headers, nonNegativeInteger, positiveInteger, storageUriPrefixes, strictObject, text, timeouts, urlText } from '../config-fields.js';

/** The config file's `providers.<name>` entries, one schema per provider `type`. */

const LocalProviderSchema = strictObject({
  type: v.literal('local'),
  chunkDelayMs: v.optional(nonNegativeInteger),
  videoRenderMs: v.optional(nonNegativeInteger),
});

const OpenAIProviderSchema = strictObject({
  type: v.literal('openai'),
  /** With `/v1`, as the OpenAI SDK takes it. */
  baseURL: v.optional(urlText),
  apiKey: v.optional(text),
  responses: v.optional(flag),
  chat: v.optional(flag),
  translateVia: v.optional(v.picklist(['chat', 'responses'], 'expected "chat" or "responses"')),
  headers: v.optional(headers),
  timeouts: v.optional(timeouts),
});

const AnthropicProviderSchema = strictObject({
  type: v.literal('anthropic'),
  /** Without `/v1`, as the Anthropic SDK takes it. */
  baseURL: v.optional(urlText),
  apiKey: v.optional(text),
  version: v.optional(dateLabel),
  beta: v.optional(
    v.pipe(
      v.union([text, v.array(text)], 'expected a string or an array of strings'),
      v.transform((beta) => (Array.isArray(beta) ? beta.join(',') : beta)),
    ),
  ),
  /** Client `anthropic-beta` values forwarded on passthrough: an allowlist (default: the request-scoped betas) or "all". */
  betas: v.optional(v.union([v.literal('all'), v.array(text)], 'expected "all" or an array of strings')),
  defaultMaxTokens: v.optional(positiveInteger),
  headers: v.optional(headers),
  timeouts: v.optional(timeouts),
});

const ArkProviderSchema = strictObject({
  type: v.literal('ark'),
  /** With `/api/v3`. */
  baseURL: v.optional(urlText),
  apiKey: v.optional(text),
  /** Volcengine speech credentials (a separate service). */
  speech: v.optional(
    strictObject({
      baseURL: v.optional(urlText),
      appId: v.optional(text),
      accessKey: v.optional(text),
      apiKey: v.optional(text),
    }),
  ),
  headers: v.optional(headers),
  timeouts: v.optional(timeouts),
});

const GeminiProviderSchema = strictObject({
  type: v.literal('gemini'),
  /** The host, without `/v1beta`. */
  baseURL: v.optional(urlText),
  apiKey: v.optional(text),
  /** `gs://` and Files-API (`files/…`) prefixes clients may name; default none. */
  storageUris: v.optional(storageUriPrefixes),
  headers: v.optional(headers),
  timeouts: v.optional(timeouts),
});

const VertexProviderSchema = strictObject({
  type: v.literal('vertex'),
  /** Default: the service-account key's `project_id`. */
  project: v.optional(text),
  /** Default `us-central1`; `global` uses the global host. */
  location: v.optional(text),
  /** A service-account key: the path of its JSON file, or the key object itself. */
  credentials: v.optional(
    v.union(
      [
        text,
        v.looseObject({ client_email: v.string('expected a string'), private_key: v.string('expected a string') }, 'expected a service-account key object'),
      ],
      'expected a path or a service-account key object',
    ),
  ),
  /** A ready OAuth access token (kept fresh by whoever writes the config). */
  accessToken: v.optional(text),
  /** The host without `/v1` (private endpoints, tests). */
  baseURL: v.optional(urlText),
  betas: v.optional(v.union([v.literal('all'), v.array(text)], 'expected "all" or an array of strings')),
  /** `gs://` prefixes clients may name; default none. */
  storageUris: v.optional(storageUriPrefixes),
  defaultMaxTokens: v.optional(positiveInteger),
  headers: v.optional(headers),
  timeouts: v.optional(timeouts),
});

const AzureProviderSchema = strictObject({
  type: v.literal('azure'),
  /** `https://{resource}.openai.azure.com/openai` (with `apiVersion`) or `…/openai/v1`. */
  baseURL: urlText,
  apiKey: v.optional(text),
  /** A dated version (`2024-10-21`) for deployment URLs; without it, the v1 API. */
  apiVersion: v.optional(text),
  /** Entra ID client credentials (instead of `apiKey`). */
  entra: v.optional(strictObject({ tenantId: text, clientId: text, clientSecret: text, authorityHost: v.optional(urlText) })),
  headers: v.optional(headers),
  timeouts: v.optional(timeouts),
});

const BedrockProviderSchema = strictObject({
  type: v.literal('bedrock'),
  /** Default: `AWS_REGION`, else `AWS_DEFAULT_REGION`. */
  region: v.optional(text),
  /** Default: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`. */
  accessKeyId: v.optional(text),
  secretAccessKey: v.optional(text),
  sessionToken: v.optional(text),
  /** A VPC endpoint; default `https://bedrock-runtime.{region}.amazonaws.com`. */
  baseURL: v.optional(urlText),
  /** Client `anthropic-beta` values forwarded to Claude: an allowlist (default: the ones Bedrock takes) or "all". */
  betas: v.optional(v.union([v.literal('all'), v.array(text)], 'expected "all" or an array of strings')),
  claudeVia: v.optional(v.picklist(['invoke', 'converse'], 'expected "invoke" or "converse"')),
  /** `s3://` prefixes clients may name; default none. */
  storageUris: v.optional(storageUriPrefixes),
  guardrail: v.optional(
    strictObject({
      identifier: text,
      version: text,
      trace: v.optional(v.picklist(['enabled', 'disabled', 'enabled_full'], 'expected "enabled", "disabled" or "enabled_full"')),
    }),
  ),
  defaultMaxTokens: v.optional(positiveInteger),
  headers: v.optional(headers),
  timeouts: v.optional(timeouts),
});

const providerTypes = ['local', 'openai', 'anthropic', 'ark', 'gemini', 'vertex', 'azure', 'bedrock'] as const;

export const ProviderConfigSchema = v.variant(
  'type',
  [
    LocalProviderSchema,
    OpenAIProviderSchema,
    AnthropicProviderSchema,
    ArkProviderSchema,
    GeminiProviderSchema,
    VertexProviderSchema,
    AzureProviderSchema,
    BedrockProviderSchema,
  ],
  (issue) => (issue.expected === 'Object' ? 'expected an object' : `expected one of ${providerTypes.map((type) => `"${type}"`).join(', ')}`),
);

export type ProviderConfig = v.InferOutput<typeof ProviderConfigSchema>;
export type LocalProviderConfig = v.InferOutput<typeof LocalProviderSchema>;
export type OpenAIProviderConfig = v.InferOutput<typeof OpenAIProviderSchema>;
export type AnthropicProviderConfig = v.InferOutput<typeof AnthropicProviderSchema>;
export type ArkProviderConfig = v.InferOutput<typeof ArkProviderSchema>;
export type GeminiProviderConfig = v.InferOutput<typeof GeminiProviderSchema>;
export type VertexProviderConfig = v.InferOutput<typeof VertexProviderSchema>;
export type AzureProviderConfig = v.InferOutput<typeof AzureProviderSchema>;
export type BedrockProviderConfig = v.InferOutput<typeof BedrockProviderSchema>;
