import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createGateway, type Gateway } from '../../src/gateway.js';
import type { GatewayOptions, UsageEvent } from '../../src/options.js';
import { createAzureProvider } from '../../src/providers/azure/azure-provider.js';
import { AZURE_DEPLOYMENTS, startFakeAzure } from '../fakes/fake-azure.js';
import type { FakeUpstream, UpstreamErrorSpec } from '../fakes/fake-server.js';
import { serve, type Served } from '../helpers/serve.js';
import { THROUGH_SECOND_DELTA, type ClientProtocol } from './harness.js';

/** Azure's two URL styles: deployment URLs with a dated `api-version`, and the v1 API. */
export type AzureStyle = 'dated' | 'v1';
export const AZURE_STYLES: readonly AzureStyle[] = ['dated', 'v1'];
export const API_VERSION = '2024-10-21';

/** Public model ids: a chat deployment and an embedding deployment per style. */
export const AZURE_MODELS: Record<AzureStyle, { chat: string; embedding: string }> = {
  dated: { chat: 'az-gpt', embedding: 'az-embed' },
  v1: { chat: 'azv1-gpt', embedding: 'azv1-embed' },
};

/** The upstream protocol a client's request reaches: Responses only where Azure has it (v1), else chat. */
export function upstreamProtocol(style: AzureStyle, client: ClientProtocol): 'chat' | 'responses' {
  return style === 'v1' && client === 'responses' ? 'responses' : 'chat';
}

/** The path Azure received for a chat-deployment call in that protocol. */
export function azurePath(style: AzureStyle, protocol: 'chat' | 'responses' | 'embeddings'): string {
  const tail = protocol === 'chat' ? 'chat/completions' : protocol;
  const deployment = protocol === 'embeddings' ? AZURE_DEPLOYMENTS.embedding : AZURE_DEPLOYMENTS.chat;
  return style === 'dated' ? `/openai/deployments/${deployment}/${tail}` : `/openai/v1/${tail}`;
}

/** Frames through the second text delta: Azure's chat stream has its prompt-filter chunk first. */
export function throughSecondDelta(protocol: 'chat' | 'responses'): number {
  return protocol === 'chat' ? THROUGH_SECOND_DELTA.chat + 1 : THROUGH_SECOND_DELTA.responses;
}

/** Azure's 429 (its own `{code, message}`, both retry headers). */
export const AZURE_RATE_LIMITED: UpstreamErrorSpec = {
  status: 429,
  code: '429',
  message:
    'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 7 seconds.',
  headers: { 'retry-after': '7', 'retry-after-ms': '7000', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-remaining-tokens': '0' },
};

/** A model's validation error as Azure passes it on: OpenAI's fields, `param` naming the field. */
export const AZURE_BAD_FIELD = {
  status: 400,
  message: "Invalid value for 'temperature': must be a number between 0 and 2.",
  type: 'invalid_request_error',
  code: 'invalid_value',
  param: 'temperature',
} as UpstreamErrorSpec;

export interface ServedGateway {
  url: string;
  gateway: Gateway;
  openai: OpenAI;
  anthropic: Anthropic;
  /** Stops the server and closes the providers. */
  close(): Promise<void>;
}

/** A gateway on loopback with these providers and models for the key `sk-test`, and the SDK clients of it. */
export async function serveGateway(options: Pick<GatewayOptions, 'providers' | 'models' | 'hooks' | 'logger'>): Promise<ServedGateway> {
  const gateway = createGateway({ keys: [{ key: 'sk-test' }], logger: false, ...options });
  const served: Served = await serve(gateway);
  return {
    url: served.url,
    gateway,
    openai: new OpenAI({ baseURL: `${served.url}/v1`, apiKey: 'sk-test', maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: served.url, apiKey: 'sk-test', maxRetries: 0 }),
    async close() {
      await served.close();
      await Promise.all(Object.values(gateway.options.providers).map((provider) => provider.close?.()));
    },
  };
}

export interface AzureHarness extends ServedGateway {
  fake: FakeUpstream;
  usage: UsageEvent[];
}

/** A gateway with both Azure styles on one fake resource (api-key auth), and the SDK clients. */
export async function startAzureHarness(): Promise<AzureHarness> {
  const fake = await startFakeAzure();
  const usage: UsageEvent[] = [];
  const served = await serveGateway({
    providers: {
      az: createAzureProvider({ baseURL: `${fake.url}/openai`, apiKey: 'az-key', apiVersion: API_VERSION }),
      azv1: createAzureProvider({ baseURL: `${fake.url}/openai/v1`, apiKey: 'az-key' }),
    },
    models: [
      { id: AZURE_MODELS.dated.chat, provider: 'az', upstreamModel: AZURE_DEPLOYMENTS.chat },
      { id: AZURE_MODELS.v1.chat, provider: 'azv1', upstreamModel: AZURE_DEPLOYMENTS.chat },
      { id: AZURE_MODELS.dated.embedding, provider: 'az', upstreamModel: AZURE_DEPLOYMENTS.embedding, kind: 'embedding' },
      { id: AZURE_MODELS.v1.embedding, provider: 'azv1', upstreamModel: AZURE_DEPLOYMENTS.embedding, kind: 'embedding' },
      // Any deployment by name: `azure/<deployment>`.
      { id: 'azure/*', provider: 'az' },
    ],
    hooks: { onUsage: (event) => void usage.push(event) },
  });
  return {
    ...served,
    fake,
    usage,
    async close() {
      await served.close();
      await fake.close();
    },
  };
}
