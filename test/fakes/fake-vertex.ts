import { createVerify, generateKeyPairSync, type KeyObject, createPublicKey } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceAccountKey } from '../../src/providers/vertex/service-account.js';
import { anthropicProtocol } from './fake-anthropic.js';
import { geminiProtocol } from './fake-gemini.js';
import { fakeVector } from './fake-openai-embeddings.js';
import { isObject, Rejection, startFake, type FakeProtocol, type FakeUpstream, type RecordedRequest } from './fake-server.js';

type Json = Record<string, any>;

export const VERTEX_PROJECT = 'fake-project';
export const VERTEX_LOCATION = 'us-east5';
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface FakeVertexOptions {
  /** Claude ids served under `publishers/anthropic`. */
  anthropicModels?: readonly string[];
}

/** How the token endpoint answers the next exchanges. */
export interface TokenScript {
  /** `expires_in` of the tokens it issues, in seconds. Default 3600. */
  expiresIn?: number;
  /** Refuse every exchange with this OAuth error. */
  fail?: { status: number; error: string; description: string };
}

export interface TokenExchange {
  /** The JWT's claims, when it could be decoded. */
  claims?: Json;
  /** Why the fake refused it, if it did. */
  rejected?: string;
}

export interface FakeVertex extends FakeUpstream {
  /** The token endpoint (the key file's `token_uri`). */
  tokenURI: string;
  /** A service-account key made for this fake (a fresh RSA key; its public half verifies the JWTs). */
  serviceAccount: ServiceAccountKey;
  /** Every exchange the token endpoint received, in order. */
  readonly exchanges: TokenExchange[];
  scriptTokens(script: TokenScript): void;
  /** Every token issued so far stops being accepted (as after a revocation). */
  revokeTokens(): void;
  /** The fake's clock for `iat`/`exp` checks and token expiry (a test that moves the gateway's moves this one too). */
  useClock(now: () => number): void;
  /** Every thought signature its Gemini models issued. */
  readonly signatures: Set<string>;
}

/**
 * A fake Vertex AI, strict where the real one is: its OAuth token endpoint verifies the
 * service-account JWT (RS256 signature against the account's public key, `iss`, `aud`, `scope`,
 * `iat`/`exp` within an hour) and issues bearer tokens; the model endpoints refuse a missing,
 * unknown, expired or revoked bearer (401 in Google's error shape), another project or location
 * and unknown paths (404). Claude (`publishers/anthropic/models/{m}:rawPredict` /
 * `:streamRawPredict`) refuses a body with `model` or without `anthropic_version:
 * "vertex-2023-10-16"`, then is the strict fake Anthropic API (fake-anthropic.ts) underneath;
 * Gemini (`publishers/google/models/{m}:generateContent` / `:streamGenerateContent?alt=sse`) is
 * the strict fake Gemini API (fake-gemini.ts). Errors come in the shape of whoever refuses.
 */
export async function startFakeVertex(options: FakeVertexOptions = {}): Promise<FakeVertex> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const tokens = new Map<string, number>(); // token → expiry, ms since epoch
  const exchanges: TokenExchange[] = [];
  let script: TokenScript = {};
  let issued = 0;
  let clock = Date.now;

  const tokenServer = createServer((req, res) => {
    void answerToken(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake token endpoint bug: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
  const tokenURI = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;
  const serviceAccount: ServiceAccountKey = {
    type: 'service_account',
    project_id: VERTEX_PROJECT,
    private_key_id: 'fake-key-0001',
    private_key: privateKey,
    client_email: `gateway@${VERTEX_PROJECT}.iam.gserviceaccount.com`,
    token_uri: tokenURI,
  };
  const verifier = createPublicKey(publicKey);

  async function answerToken(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const exchange: TokenExchange = {};
    exchanges.push(exchange);
    const refuse = (status: number, error: string, description: string) => {
      exchange.rejected = `${error}: ${description}`;
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error, error_description: description }));
    };
    if (req.method !== 'POST' || req.url !== '/token') return refuse(404, 'not_found', `${req.method} ${req.url}`);
    if (!/^application\/x-www-form-urlencoded/.test(req.headers['content-type'] ?? '')) return refuse(400, 'invalid_request', 'Bad Request');
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    if (form.get('grant_type') !== JWT_BEARER) return refuse(400, 'unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
    const problem = checkAssertion(form.get('assertion') ?? '', exchange);
    if (problem) return refuse(400, problem.error, problem.description);
    if (script.fail) return refuse(script.fail.status, script.fail.error, script.fail.description);
    const expiresIn = script.expiresIn ?? 3600;
    const token = `ya29.fake-${String(++issued).padStart(4, '0')}`;
    tokens.set(token, clock() + expiresIn * 1000);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify({ access_token: token, expires_in: expiresIn, token_type: 'Bearer' }));
  }

  /** Google's checks of a service-account assertion, with its error texts. */
  function checkAssertion(assertion: string, exchange: TokenExchange): { error: string; description: string } | undefined {
    const parts = assertion.split('.');
    const invalid = (description: string) => ({ error: 'invalid_grant', description });
    if (parts.length !== 3) return invalid('Invalid JWT: the assertion is not a compact JWS.');
    const [head, payload, signature] = parts as [string, string, string];
    const header = decodePart(head);
    const claims = decodePart(payload);
    if (!header || !claims) return invalid('Invalid JWT: the header or claims are not base64url JSON.');
    exchange.claims = claims;
    if (header.alg !== 'RS256') return invalid(`Invalid JWT: alg ${String(header.alg)} is not RS256.`);
    if (header.kid !== undefined && header.kid !== serviceAccount.private_key_id) return invalid('Invalid JWT Signature.');
    if (!verifies(verifier, `${head}.${payload}`, signature)) return invalid('Invalid JWT Signature.');
    if (claims.iss !== serviceAccount.client_email) return invalid('Invalid grant: account not found');
    if (claims.aud !== tokenURI) return invalid('Invalid JWT: Failed audience check.');
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes(CLOUD_PLATFORM_SCOPE)) return { error: 'invalid_scope', description: 'Invalid OAuth scope or ID token audience provided.' };
    const now = clock() / 1000;
    const timely =
      Number.isInteger(claims.iat) &&
      Number.isInteger(claims.exp) &&
      claims.exp > claims.iat &&
      claims.exp - claims.iat <= 3600 &&
      claims.iat <= now + 60 &&
      claims.exp > now;
    if (!timely) {
      return invalid(
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    }
    return undefined;
  }

  const claude = anthropicProtocol({ models: options.anthropicModels ?? ['claude-sonnet-4-5', 'claude-sonnet-4-5@20250929'] });
  // Gemini underneath Vertex's path, its bearer checked here instead of an API key.
  const gemini = geminiProtocol({
    prefix: `/v1/projects/${VERTEX_PROJECT}/locations/${VERTEX_LOCATION}/publishers/google`,
    checkCaller: () => {},
    service: 'vertex',
  });
  /** The publisher of the request being answered: its errors are in that publisher's shape. */
  let current: string | undefined;
  const modelPath = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):([A-Za-z]+)$/;

  const protocol: FakeProtocol = {
    validate(request: RecordedRequest): string {
      current = undefined;
      checkBearer(request);
      const match = modelPath.exec(request.path);
      if (request.method !== 'POST' || !match) throw googleError(404, 'NOT_FOUND', `The requested URL ${request.path} was not found on this server.`);
      const [, project, location, publisher, model, method] = match as unknown as [string, string, string, string, string, string];
      if (project !== VERTEX_PROJECT) throw googleError(403, 'PERMISSION_DENIED', `Permission denied on resource project ${project}.`);
      if (location !== VERTEX_LOCATION) throw googleError(404, 'NOT_FOUND', `Publisher model not found in location ${location}.`);
      current = publisher;
      if (publisher === 'google' && method === 'predict') return `predict ${checkPredict(decodeURIComponent(model), request.body)}`;
      if (publisher === 'google') return `google ${gemini.validate(request)}`;
      if (publisher !== 'anthropic') throw googleError(404, 'NOT_FOUND', `Publisher Model \`publishers/${publisher}/models/${model}\` not found.`);
      const claudeModel = decodeURIComponent(model);
      if (method !== 'rawPredict' && method !== 'streamRawPredict')
        throw googleError(400, 'INVALID_ARGUMENT', `Unsupported method ${method} for Anthropic models.`);
      const body = request.body;
      if (!isObject(body)) throw googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
      if ('model' in body) throw new Rejection(400, 'model: Extra inputs are not permitted', { type: 'invalid_request_error' });
      if (body.anthropic_version === undefined) throw new Rejection(400, 'anthropic_version: Field required', { type: 'invalid_request_error' });
      if (body.anthropic_version !== 'vertex-2023-10-16') {
        throw new Rejection(400, "anthropic_version: Input should be 'vertex-2023-10-16'", { type: 'invalid_request_error' });
      }
      // The pairing Anthropic's Vertex SDK uses: the streaming method for a streamed body, only then.
      if ((method === 'streamRawPredict') !== (body.stream === true)) {
        throw googleError(400, 'INVALID_ARGUMENT', `${method} does not match stream: ${String(body.stream)}.`);
      }
      // Underneath: the Messages API, as it would see the request from Anthropic's own front.
      const { anthropic_version: _version, ...messagesBody } = body;
      claude.validate({
        ...request,
        path: '/v1/messages',
        headers: { ...request.headers, 'x-api-key': 'up-key', 'anthropic-version': '2023-06-01' },
        body: { ...messagesBody, model: claudeModel },
      });
      return `anthropic ${claudeModel}`;
    },

    streams: (endpoint, request) => {
      const [publisher, inner] = endpoint.split(' ') as [string, string];
      if (publisher === 'predict') return false;
      return publisher === 'google' ? gemini.streams!(inner, request) : (request.body as Json).stream === true;
    },

    render(endpoint, body, reply) {
      const [publisher, inner] = endpoint.split(' ') as [string, string];
      if (publisher === 'predict') return { status: 200, headers: { 'content-type': 'application/json; charset=UTF-8' }, json: predictions(body) };
      return publisher === 'google' ? gemini.render(inner, body, reply) : claude.render('messages', { ...body, model: inner }, reply);
    },

    streamErrorFrames(endpoint, error) {
      const [publisher, inner] = endpoint.split(' ') as [string, string];
      return publisher === 'google' ? gemini.streamErrorFrames(inner, error) : claude.streamErrorFrames('messages', error);
    },

    errorResponse(status, message, fields, headers) {
      if (current === 'google' && fields.type !== 'google') return gemini.errorResponse(status, message, fields, headers);
      if (fields.type === 'google') {
        return {
          status,
          headers: { 'content-type': 'application/json; charset=UTF-8', ...headers },
          json: { error: { code: status, message, status: fields.code } },
        };
      }
      return claude.errorResponse(status, message, fields, headers);
    },
  };

  function checkBearer(request: RecordedRequest): void {
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const expiry = token === undefined ? undefined : tokens.get(token);
    if (expiry === undefined || expiry <= clock()) {
      throw googleError(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    }
  }

  const fake = await startFake(protocol);
  const { reset, close } = fake;
  return Object.assign(fake, {
    tokenURI,
    serviceAccount,
    exchanges,
    signatures: gemini.signatures,
    scriptTokens(next: TokenScript) {
      script = next;
    },
    revokeTokens() {
      tokens.clear();
    },
    useClock(now: () => number) {
      clock = now;
    },
    reset() {
      reset();
      exchanges.length = 0;
      script = {};
      clock = Date.now;
    },
    async close() {
      await close();
      await new Promise<void>((resolve) => {
        tokenServer.closeAllConnections();
        tokenServer.close(() => resolve());
      });
    },
  });
}

/** Text embedding models served by `:predict`, and how many instances one request may hold. */
export const VERTEX_EMBEDDING_MODELS: Record<string, number> = { 'gemini-embedding-001': 1, 'text-embedding-005': 250 };
const TASK_TYPES = [
  'RETRIEVAL_QUERY',
  'RETRIEVAL_DOCUMENT',
  'SEMANTIC_SIMILARITY',
  'CLASSIFICATION',
  'CLUSTERING',
  'QUESTION_ANSWERING',
  'FACT_VERIFICATION',
  'CODE_RETRIEVAL_QUERY',
];

/** Vertex's checks of a text-embedding `:predict` body (instances of `content`, `task_type`, `title`; `parameters`). */
function checkPredict(model: string, body: unknown): string {
  const limit = VERTEX_EMBEDDING_MODELS[model];
  if (limit === undefined) throw googleError(404, 'NOT_FOUND', `Publisher Model \`publishers/google/models/${model}\` not found.`);
  if (!isObject(body) || !Array.isArray(body.instances) || body.instances.length === 0)
    throw googleError(400, 'INVALID_ARGUMENT', 'instances: a non-empty list is required.');
  if (body.instances.length > limit)
    throw googleError(400, 'INVALID_ARGUMENT', `Unable to submit request because the model ${model} supports up to ${limit} instance(s) per request.`);
  for (const key of Object.keys(body)) if (key !== 'instances' && key !== 'parameters') throw googleError(400, 'INVALID_ARGUMENT', `Unknown name "${key}".`);
  for (const [at, instance] of body.instances.entries()) {
    if (!isObject(instance) || typeof instance.content !== 'string' || instance.content === '')
      throw googleError(400, 'INVALID_ARGUMENT', `instances[${at}].content: a non-empty string is required.`);
    for (const key of Object.keys(instance))
      if (!['content', 'task_type', 'title'].includes(key)) throw googleError(400, 'INVALID_ARGUMENT', `instances[${at}]: unknown field "${key}".`);
    if (instance.task_type !== undefined && !TASK_TYPES.includes(instance.task_type))
      throw googleError(400, 'INVALID_ARGUMENT', `instances[${at}].task_type: invalid value ${String(instance.task_type)}.`);
  }
  const parameters = body.parameters ?? {};
  if (!isObject(parameters)) throw googleError(400, 'INVALID_ARGUMENT', 'parameters: an object is required.');
  for (const key of Object.keys(parameters))
    if (key !== 'autoTruncate' && key !== 'outputDimensionality') throw googleError(400, 'INVALID_ARGUMENT', `parameters: unknown field "${key}".`);
  return model;
}

/** Vectors made from each instance's text (the same as the Gemini fake's), with Vertex's token statistics. */
function predictions(body: Json): Json {
  const dimensions = body.parameters?.outputDimensionality ?? 768;
  return {
    predictions: body.instances.map((instance: Json) => ({
      embeddings: { values: fakeVector(instance.content, dimensions), statistics: { truncated: false, token_count: Math.ceil(instance.content.length / 4) } },
    })),
    metadata: { billableCharacterCount: body.instances.reduce((sum: number, instance: Json) => sum + instance.content.length, 0) },
  };
}

/** A refusal in Google's error shape (`{"error":{"code","message","status"}}`). */
function googleError(status: number, code: string, message: string): Rejection {
  return new Rejection(status, message, { type: 'google', code });
}

function decodePart(part: string): Json | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function verifies(key: KeyObject, signed: string, signature: string): boolean {
  return createVerify('RSA-SHA256').update(signed).verify(key, Buffer.from(signature, 'base64url'));
}
