import type { FakeEntra } from './fake-azure-entra.js';
import { fakeVector } from './fake-openai-embeddings.js';
import { openaiProtocol } from './fake-openai.js';
import { isObject, Rejection, sseData, startFake, type FakeProtocol, type FakeUpstream, type RecordedRequest } from './fake-server.js';

type Json = Record<string, any>;
type Kind = 'chat' | 'responses' | 'embeddings';

export interface FakeAzureOptions {
  /**
   * How the resource authenticates: `key` takes the `api-key` header (a Bearer token is refused),
   * `entra` takes tokens `entra` issued (an `api-key` is refused). Default `key`.
   */
  auth?: 'key' | 'entra';
  /** The key of `auth: 'key'`. Default `az-key`. */
  apiKey?: string;
  entra?: FakeEntra;
}

/** The deployments of the fake resource: a chat model and an embedding model. */
export const AZURE_DEPLOYMENTS = { chat: 'gpt4o-prod', embedding: 'embed-small' } as const;
/** Dated API versions the fake accepts on deployment URLs. */
export const AZURE_API_VERSIONS = ['2024-10-21', '2025-04-01-preview'];
/** The labels the v1 API accepts as `api-version`, for those who send one. */
export const V1_API_VERSIONS = ['preview', 'v1'];
const EMBEDDING_DIMENSIONS = 1536;

/** Content filter results of a harmless text, as Azure attaches them to prompts and choices. */
const SAFE = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};

/**
 * A fake Azure OpenAI resource, from Microsoft's REST reference: deployment URLs
 * (`/openai/deployments/{d}/chat/completions|embeddings?api-version=…`; no Responses there) and
 * the v1 API (`/openai/v1/chat/completions|responses|embeddings`, the deployment in `model`; no
 * `api-version`). Requests are checked as the OpenAI fake checks them (same bodies), plus what
 * Azure adds: the `api-version` (missing: 404 "Resource not found"), the deployment (404
 * `DeploymentNotFound`), the auth header the resource takes (401 in Azure's `{error:{code,message}}`).
 * Answers carry Azure's content filter results; a chat stream opens with Azure's chunk of
 * `prompt_filter_results` and empty `choices`. Errors come in Azure's shapes: a 429 with
 * `retry-after-ms` / `retry-after`, a 400 with `param`, the content filter's `content_filter`
 * code with its `innererror`.
 */
export async function startFakeAzure(options: FakeAzureOptions = {}): Promise<FakeUpstream> {
  return startFake(azureProtocol(options));
}

const INNER_KEY = 'inner-key';

function azureProtocol(options: FakeAzureOptions): FakeProtocol {
  const auth = options.auth ?? 'key';
  const apiKey = options.apiKey ?? 'az-key';
  const deployments: string[] = [AZURE_DEPLOYMENTS.chat, AZURE_DEPLOYMENTS.embedding];
  // The OpenAI fake checks and renders the bodies, under OpenAI's paths and its own key.
  const openai = openaiProtocol({ apiKey: INNER_KEY, models: deployments });
  let requestNumber = 0;
  const headers = (extra?: Record<string, string>) => ({
    'apim-request-id': `0a1b2c3d-${(++requestNumber).toString().padStart(4, '0')}-fake`,
    'x-ms-region': 'Sweden Central',
    ...extra,
  });

  /** The request as the OpenAI fake would see it. */
  const asOpenAI = (request: RecordedRequest, kind: Kind, deployment: string | undefined): RecordedRequest => ({
    ...request,
    path: `/v1/${kind === 'chat' ? 'chat/completions' : kind}`,
    headers: { ...request.headers, authorization: `Bearer ${INNER_KEY}` },
    body: deployment && isObject(request.body) ? { ...request.body, model: deployment } : request.body,
  });

  function route(request: RecordedRequest): { kind: Kind | 'other'; deployment?: string } {
    const query = new URL(request.url, 'http://fake').searchParams;
    const dated = /^\/openai\/deployments\/([^/]+)\/(.+)$/.exec(request.path);
    if (dated) {
      const version = query.get('api-version');
      // Without it Azure finds no such resource; with one it does not know, it says so.
      if (version === null) throw azureError(404, '404', 'Resource not found');
      if (!AZURE_API_VERSIONS.includes(version)) throw azureError(400, 'BadRequest', 'API version not supported');
      checkAuth(request);
      const deployment = decodeURIComponent(dated[1]!);
      if (!deployments.includes(deployment)) throw deploymentNotFound();
      const kind = dated[2] === 'chat/completions' ? 'chat' : dated[2] === 'embeddings' ? 'embeddings' : undefined;
      if (!kind || request.method !== 'POST') throw azureError(404, '404', 'Resource not found');
      return { kind, deployment };
    }
    const v1 = /^\/openai\/v1\/(.+)$/.exec(request.path);
    if (!v1) throw azureError(404, '404', 'Resource not found');
    // The v1 API takes no dated version ("preview" and "v1" are its own labels).
    const version = query.get('api-version');
    if (version !== null && !V1_API_VERSIONS.includes(version)) throw azureError(400, 'BadRequest', 'API version not supported');
    checkAuth(request);
    const kind = v1[1] === 'chat/completions' ? 'chat' : v1[1] === 'responses' || v1[1] === 'embeddings' ? v1[1] : 'other';
    if (kind !== 'other' && request.method === 'POST' && isObject(request.body) && typeof request.body.model === 'string') {
      if (!deployments.includes(request.body.model)) throw deploymentNotFound();
    }
    return { kind };
  }

  function checkAuth(request: RecordedRequest): void {
    const key = request.headers['api-key'];
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (auth === 'key') {
      if (bearer !== undefined)
        throw azureError(
          401,
          '401',
          'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.',
        );
      if (key !== apiKey) throw invalidKey();
      return;
    }
    if (key !== undefined) throw invalidKey();
    if (bearer === undefined || !options.entra?.accepts(bearer)) {
      throw azureError(
        401,
        '401',
        'Unauthorized. Access token is missing, invalid, audience is incorrect (https://cognitiveservices.azure.com), or have expired.',
      );
    }
  }

  return {
    serve(request) {
      const { kind } = route(request);
      // Stored responses and the other Responses resources of the v1 API.
      if (kind === 'other') {
        const served = openai.serve?.({ ...asOpenAI(request, 'responses', undefined), path: request.path.replace(/^\/openai/, '') });
        if (!served) throw azureError(404, '404', 'Resource not found');
        return { ...served, headers: { ...served.headers, ...headers() } };
      }
      return undefined;
    },

    validate(request) {
      const { kind, deployment } = route(request);
      if (kind === 'other') throw azureError(404, '404', 'Resource not found');
      if (kind === 'embeddings') {
        checkEmbeddings(request.body);
        return `embeddings|${deployment ?? request.body.model}`;
      }
      openai.validate(asOpenAI(request, kind, deployment));
      return `${kind}|${deployment ?? request.body.model}`;
    },

    render(endpoint, body, reply) {
      const [kind, deployment] = endpoint.split('|') as [Kind, string];
      if (kind === 'embeddings') return { status: 200, headers: { 'content-type': 'application/json', ...headers() }, json: embeddings(body, deployment) };
      const rendered = openai.render(kind, { ...body, model: deployment }, reply);
      const extra = headers();
      if (kind === 'responses') return { ...rendered, headers: { ...rendered.headers, ...extra } };
      if (rendered.json) {
        const json = rendered.json as Json;
        return {
          ...rendered,
          headers: { ...rendered.headers, ...extra },
          json: {
            ...json,
            prompt_filter_results: [{ prompt_index: 0, content_filter_results: SAFE }],
            choices: json.choices.map((choice: Json) => ({ ...choice, content_filter_results: SAFE })),
          },
        };
      }
      // Azure's stream: its prompt filter chunk first, then OpenAI's chunks with filter results.
      const frames = (rendered.frames ?? []).map((frame) => {
        const data = frame.slice('data: '.length).trim();
        if (data === '[DONE]') return frame;
        const chunk = JSON.parse(data) as Json;
        if (chunk.choices.length === 0) return frame;
        return sseData({ ...chunk, choices: chunk.choices.map((choice: Json) => ({ ...choice, content_filter_results: SAFE })) });
      });
      const promptFilter = sseData({
        choices: [],
        created: 0,
        id: '',
        model: '',
        object: '',
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: SAFE }],
      });
      return { ...rendered, headers: { ...rendered.headers, ...extra }, frames: [promptFilter, ...frames] };
    },

    streamErrorFrames(endpoint, error) {
      return openai.streamErrorFrames(endpoint.split('|')[0]!, error);
    },

    errorResponse(status, message, fields, extra) {
      // Azure's own errors are `{code, message}`; the model's validation errors keep OpenAI's fields.
      const error: Json =
        fields.type !== undefined
          ? { message, type: fields.type, param: fields.param ?? null, code: fields.code ?? null }
          : { code: fields.code ?? String(status), message, ...(fields.param ? { param: fields.param } : {}) };
      if (fields.code === 'content_filter') {
        // The content filter's refusal (Microsoft's "content filtering" reference).
        Object.assign(error, {
          type: null,
          param: 'prompt',
          status: 400,
          innererror: {
            code: 'ResponsibleAIPolicyViolation',
            content_filter_result: { ...SAFE, violence: { filtered: true, severity: 'high' } },
          },
        });
      }
      return { status, headers: { 'content-type': 'application/json', ...headers(extra) }, json: { error } };
    },
  };
}

function azureError(status: number, code: string, message: string): Rejection {
  return new Rejection(status, message, { code });
}

function invalidKey(): Rejection {
  return azureError(
    401,
    '401',
    'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  );
}

function deploymentNotFound(): Rejection {
  return azureError(
    404,
    'DeploymentNotFound',
    'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
  );
}

/** Azure's embeddings body rules (OpenAI's): `input` a string, strings or token arrays; known fields only. */
function checkEmbeddings(body: unknown): void {
  if (!isObject(body)) throw new Rejection(400, 'We could not parse the JSON body of your request.', { type: 'invalid_request_error' });
  const unknown = Object.keys(body).find((field) => !['input', 'model', 'encoding_format', 'dimensions', 'user'].includes(field));
  if (unknown) throw new Rejection(400, `Unrecognized request argument supplied: ${unknown}`, { type: 'invalid_request_error', param: unknown });
  const input = body.input;
  const valid = typeof input === 'string' ? input !== '' : Array.isArray(input) && input.length > 0;
  if (!valid) throw new Rejection(400, "'$.input' is invalid.", { type: 'invalid_request_error', param: 'input' });
  if (body.encoding_format !== undefined && !['float', 'base64'].includes(body.encoding_format)) {
    throw new Rejection(400, `'${body.encoding_format}' is not one of ['float', 'base64'] - 'encoding_format'`, {
      type: 'invalid_request_error',
      param: 'encoding_format',
    });
  }
}

function embeddings(body: Json, deployment: string): Json {
  const inputs: (string | number[])[] =
    typeof body.input === 'string' ? [body.input] : body.input.every((item: unknown) => typeof item === 'number') ? [body.input] : body.input;
  const dimensions = body.dimensions ?? EMBEDDING_DIMENSIONS;
  let tokens = 0;
  const data = inputs.map((input, index) => {
    tokens += typeof input === 'string' ? input.split(/\s+/).filter(Boolean).length : input.length;
    const vector = fakeVector(typeof input === 'string' ? input : input.join(','), dimensions);
    return {
      object: 'embedding',
      index,
      embedding: body.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
    };
  });
  return { object: 'list', data, model: `text-embedding-3-small (${deployment})`, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}
