import type { Dispatcher } from 'undici';
import { type AccessTokens, callbackAccessTokens } from '../http/access-tokens.js';
import { pooledAgent, type UpstreamTimeouts } from '../http/upstream-client.js';
import { openAIResponsesResources } from '../openai/openai-responses-resources.js';
import { openAICompatibleProvider } from '../openai/openai-provider.js';
import type { Provider } from '../provider.js';
import { AzureClient } from './azure-client.js';
import { azureMedia } from './azure-media.js';
import { withoutContentFilterChunks } from './content-filter-chunks.js';
import { type EntraCredentials, entraTokens } from './entra-tokens.js';

export interface AzureProviderOptions {
  /**
   * The resource's endpoint: `https://{resource}.openai.azure.com/openai` for deployment URLs
   * (with `apiVersion`), `https://{resource}.openai.azure.com/openai/v1` for the v1 API. A bare
   * host gets `/openai` (and `/v1` without `apiVersion`) added.
   */
  baseURL: string;
  /** Sent as the `api-key` header. */
  apiKey?: string | undefined;
  /**
   * A dated API version (`2024-10-21`): requests go to
   * `/deployments/{upstreamModel}/…?api-version=…`, Chat Completions only (Responses clients are
   * translated). Without it the v1 API is used (`/v1/chat/completions`, `/v1/responses`, the
   * deployment named in the body's `model`).
   */
  apiVersion?: string | undefined;
  /** Entra ID client credentials of an app registration: tokens fetched and kept fresh by the gateway. */
  entra?: EntraCredentials | undefined;
  /** The host's own Entra ID token source (`@azure/identity`, a managed identity), asked on every call. */
  getAccessToken?: (() => string | Promise<string>) | undefined;
  /** Extra headers on every upstream request. */
  headers?: Record<string, string> | undefined;
  timeouts?: UpstreamTimeouts | undefined;
  dispatcher?: Dispatcher | undefined;
}

/** Deployments whose clients are kept; past this the map starts over (wildcard models can name any). */
const MAX_KEPT_DEPLOYMENTS = 256;

/**
 * Azure OpenAI: the `openai` provider's code (passthrough where the protocol matches, the IR
 * otherwise, the same media calls) with Azure's URLs and auth. `upstreamModel` is the
 * deployment's name. Auth is an `api-key`, or an Entra ID bearer token (client credentials or
 * the host's callback) that a 401 from Azure drops for a fresh one.
 */
export function createAzureProvider(options: AzureProviderOptions): Provider {
  const sources = [options.apiKey, options.entra, options.getAccessToken].filter((source) => source !== undefined);
  if (sources.length !== 1) throw new TypeError('azure: give exactly one of apiKey, entra or getAccessToken');
  const endpoint = azureEndpoint(options.baseURL, options.apiVersion);

  const tokens: AccessTokens | undefined = options.entra
    ? entraTokens(options.entra)
    : options.getAccessToken
      ? callbackAccessTokens(options.getAccessToken, 'Azure OpenAI')
      : undefined;
  const dispatcher = options.dispatcher ?? pooledAgent(options.timeouts);
  const clientAt = (baseURL: string) =>
    new AzureClient({
      baseURL,
      headers: { ...options.headers, ...(options.apiKey !== undefined ? { 'api-key': options.apiKey } : {}) },
      apiVersion: options.apiVersion,
      tokens,
      timeouts: options.timeouts,
      dispatcher,
    });

  let clientFor: (model: string) => AzureClient;
  if (endpoint.style === 'v1') {
    const client = clientAt(endpoint.url);
    clientFor = () => client;
  } else {
    const deployments = new Map<string, AzureClient>();
    clientFor = (deployment) => {
      let client = deployments.get(deployment);
      if (!client) {
        if (deployments.size >= MAX_KEPT_DEPLOYMENTS) deployments.clear();
        client = clientAt(`${endpoint.url}/deployments/${encodeURIComponent(deployment)}`);
        deployments.set(deployment, client);
      }
      return client;
    };
  }

  const v1 = endpoint.style === 'v1';
  return openAICompatibleProvider({
    type: 'azure',
    clientFor,
    chat: true,
    responses: v1,
    translateVia: 'chat',
    // Stored responses are on the v1 API; token counts and compaction are OpenAI's alone.
    resources: v1 ? { storedResponse: openAIResponsesResources(clientFor('')).storedResponse! } : {},
    media: azureMedia(clientFor),
    streamDecoder: withoutContentFilterChunks,
    close: async () => {
      await tokens?.close();
      // The clients borrow the dispatcher; it is closed once, here, when the provider made it.
      if (!options.dispatcher) await dispatcher.close();
    },
  });
}

/** Which URL style a base URL and API version mean, and the base the paths go under. */
export function azureEndpoint(baseURL: string, apiVersion: string | undefined): { style: 'v1' | 'deployments'; url: string } {
  const root = baseURL.replace(/\/+$/, '');
  if (/\/v1$/.test(root)) return { style: 'v1', url: root };
  const openai = /\/openai$/.test(root) ? root : `${root}/openai`;
  return apiVersion === undefined ? { style: 'v1', url: `${openai}/v1` } : { style: 'deployments', url: openai };
}
