import type { FuzzCase } from './cases.js';
import type { LogLine } from './child.js';
import { routeOf } from './routes.js';
import { headBytes, type WireOutcome, type WireRequest, type WireResponse } from './wire.js';

/**
 * The rules every fuzz case is held to; each returned string is one broken rule.
 *
 * 1. An answer arrives, whole, before the deadline (no hang; a stream is read to its last chunk);
 *    only a head over Node's 16 KiB limit may get a reset instead of Node's 431 (see below).
 * 2. Its status is 2xx (the mutation happened to stay valid) or 4xx; never 5xx, never anything else.
 * 3. A 4xx from the gateway (it carries `x-request-id`) has the route's error body: OpenAI's
 *    `{"error":{"message","type","param","code"}}`, or on `/v1/messages` and its `count_tokens`
 *    (and the model routes, to a client sending Anthropic's headers) Anthropic's
 *    `{"type":"error","error":{"type","message"},"request_id"}`, the id its `request-id` header
 *    carries; on `/mcp` a JSON-RPC error with no id, `{"jsonrpc":"2.0","error":{"code","message"},"id":null}`.
 *    A 4xx without that header came from Node's
 *    HTTP parser before the gateway saw the request (400 bad request, 431 headers too large): its
 *    status is all there is to check.
 * 4. A 400 for a corrupted body field names that field in `param` (OpenAI shape; Anthropic's
 *    body has none, and its messages name the field only where validation does: hand-written
 *    cases check it with `expect.message`).
 * 5. A 2xx body is what its content type says: JSON parses; an SSE stream has no error event; an
 *    MCP answer holds no JSON-RPC internal error (-32603: a handler that threw, the 500 of JSON-RPC).
 * 6. The gateway logged no error for the request, and did not crash.
 */
export function judge(testCase: FuzzCase, outcome: WireOutcome, logs: readonly LogLine[], crashed: string | undefined, request: WireRequest): string[] {
  const problems: string[] = [];
  if (crashed) problems.push(`the gateway process crashed (${crashed})`);
  problems.push(...judgeLogs(logs));
  if (outcome.kind === 'timeout') return [...problems, `hang: ${outcome.detail}`];
  // Node answers a head over its limit with 431 and closes at once: a client still sending the
  // head sees the reset before the answer. Node's doing, before the gateway sees anything.
  if (outcome.kind === 'closed' && headBytes(request) > NODE_MAX_HEAD_BYTES) return problems;
  if (outcome.kind === 'closed') return [...problems, `no response: ${outcome.detail}`];

  const { response } = outcome;
  const { status } = response;
  if (status >= 500) problems.push(`status ${status}: ${preview(response)}`);
  else if (!(status >= 200 && status < 300) && !(status >= 400 && status < 500)) problems.push(`unexpected status ${status}`);

  const fromGateway = response.headers['x-request-id'] !== undefined;
  const isHead = (testCase.method ?? routeOf(testCase.route).method) === 'HEAD';
  const style = styleFor(request);
  if (status >= 400 && status < 500 && fromGateway && !isHead) problems.push(...checkErrorBody(testCase, response, style));
  if (status >= 200 && status < 300 && !isHead) problems.push(...checkSuccessBody(response, style));
  problems.push(...checkExpectations(testCase, response, style));
  return problems;
}

/** Node's default `--max-http-header-size`. */
const NODE_MAX_HEAD_BYTES = 16 * 1024;

/** Rule 6 alone: the log lines that say the gateway failed. */
export function judgeLogs(logs: readonly LogLine[]): string[] {
  return logs.filter(isFailureLog).map((line) => `the gateway logged ${line.level} "${line.message}": ${JSON.stringify(line).slice(0, 600)}`);
}

/** Lines that mean the gateway failed: a masked 500, a stream cut by a 5xx, a crash. */
function isFailureLog(line: LogLine): boolean {
  if (line.level === 'error' || line.level === 'crash') return true;
  if (line.level !== 'warn') return false;
  // `request failed` / `stream failed` are logged for GatewayErrors of status >= 500 only.
  return typeof line.status !== 'number' || line.status >= 500;
}

function checkErrorBody(testCase: FuzzCase, response: WireResponse, style: ErrorStyle): string[] {
  const problems: string[] = [];
  if (!/^application\/json/.test(response.headers['content-type'] ?? '')) {
    problems.push(`error content-type is ${JSON.stringify(response.headers['content-type'])}, not application/json`);
  }
  let body: unknown;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return [...problems, `error body is not JSON: ${preview(response)}`];
  }
  if (style === 'mcp') {
    const error = isObject(body) && body.jsonrpc === '2.0' && body.id === null && isObject(body.error) ? body.error : undefined;
    const shaped = error && Number.isInteger(error.code) && typeof error.message === 'string' && error.message !== '';
    if (!shaped) return [...problems, `error body is not a JSON-RPC error {"jsonrpc":"2.0","error":{"code","message"},"id":null}: ${preview(response)}`];
    if (response.status >= 400 && response.status < 500 && error.code === -32603) problems.push(`a 4xx answered as an internal error: ${preview(response)}`);
    return problems;
  }
  if (style === 'gemini') {
    const error = isObject(body) && isObject(body.error) ? body.error : undefined;
    const shaped = error && error.code === response.status && typeof error.message === 'string' && error.message !== '' && typeof error.status === 'string';
    if (!shaped) return [...problems, `error body is not Google's {"error":{"code","message","status"}}: ${preview(response)}`];
    if (response.status === 400 && testCase.field !== undefined && !namesField(googleParam(error), testCase.field)) {
      problems.push(`400 for a bad '${testCase.field}' names field ${JSON.stringify(googleParam(error))}: ${preview(response)}`);
    }
    return problems;
  }
  if (style === 'anthropic') {
    const error = isObject(body) && body.type === 'error' && isObject(body.error) ? body.error : undefined;
    if (!error || typeof error.type !== 'string' || typeof error.message !== 'string' || error.message === '') {
      problems.push(`error body is not Anthropic's {"type":"error","error":{"type","message"}}: ${preview(response)}`);
    }
    if (!isObject(body) || body.request_id !== response.headers['request-id']) {
      problems.push(
        `Anthropic's error body has request_id ${JSON.stringify(isObject(body) ? body.request_id : undefined)}, not its request-id header: ${preview(response)}`,
      );
    }
    return problems;
  }
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const shaped =
    error &&
    typeof error.message === 'string' &&
    error.message !== '' &&
    typeof error.type === 'string' &&
    'param' in error &&
    (error.param === null || typeof error.param === 'string') &&
    'code' in error &&
    (error.code === null || typeof error.code === 'string');
  if (!shaped) return [...problems, `error body is not OpenAI's {"error":{"message","type","param","code"}}: ${preview(response)}`];
  if (response.status === 400 && testCase.field !== undefined && !namesField(error.param as string | null, testCase.field)) {
    problems.push(`400 for a bad '${testCase.field}' has param ${JSON.stringify(error.param)}: ${preview(response)}`);
  }
  return problems;
}

/**
 * Whether `param` points at the corrupted field: the same top-level field (a bad
 * `messages[0].content[1].type` may be reported at `messages[0].content[1]` or deeper).
 */
function namesField(param: string | null, field: string): boolean {
  if (param === null) return false;
  return topLevel(param) === topLevel(field);
}

/** `messages[0].role` → `messages`; `["odd.key"].x` → `odd.key`. */
function topLevel(path: string): string {
  const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(path);
  if (quoted) return JSON.parse(quoted[1]!) as string;
  return /^[^.[]*/.exec(path)![0];
}

type ErrorStyle = 'openai' | 'anthropic' | 'gemini' | 'mcp';

/** The field a Google error names: its `google.rpc.BadRequest` detail's first violation. */
function googleParam(error: Record<string, unknown>): string | null {
  const details = Array.isArray(error.details) ? error.details : [];
  const badRequest = details.find((detail) => isObject(detail) && Array.isArray(detail.fieldViolations)) as
    | { fieldViolations: { field?: unknown }[] }
    | undefined;
  const field = badRequest?.fieldViolations[0]?.field;
  return typeof field === 'string' ? field : null;
}

/** The `ErrorInfo` reason of a Google error, as the gateway's code (`model_not_found`). */
function googleCode(error: Record<string, unknown>): string | null {
  const details = Array.isArray(error.details) ? error.details : [];
  const info = details.find((detail) => isObject(detail) && typeof detail.reason === 'string') as { reason: string } | undefined;
  return info ? info.reason.toLowerCase() : null;
}

/**
 * The error shape a request is answered with: Anthropic's on `/v1/messages` and
 * `/v1/messages/count_tokens` (whatever the method); on the model routes, Anthropic's to a
 * client that sends `anthropic-version`, or `x-api-key` without `authorization`, as Claude Code
 * does; else OpenAI's. The path is the one the gateway sees: whatwg-node appends the target to
 * the Host, so an absolute-form target `http://h/v1/messages` arrives as the path `//h/v1/messages`.
 */
function styleFor(request: WireRequest): ErrorStyle {
  let path: string;
  try {
    path = new URL(`http://127.0.0.1${request.target}`).pathname;
  } catch {
    path = request.target;
  }
  if (path === '/v1/messages' || path === '/v1/messages/count_tokens') return 'anthropic';
  if (path === '/mcp') return 'mcp';
  // Google's routes: the listing, and `/v1beta/models/<id, slashes allowed>` (one model, or
  // `:generateContent` / `:streamGenerateContent` in its last segment) when the id decodes.
  const googleRest = /^\/v1beta\/models\/((?:[^/]+\/)*[^/]+)$/.exec(path)?.[1];
  if (path === '/v1beta/models' || (googleRest !== undefined && decodes(googleRest))) return 'gemini';
  // Gemini's v1 generation (and counting, embedding) routes share `/v1/models/...` with OpenAI's model routes: a single-segment
  // path is also the one-model route (first in the table), which answers by the client's headers.
  const v1Rest = /^\/v1\/models\/((?:[^/]+\/)*[^/]+):(?:generateContent|streamGenerateContent|countTokens|embedContent|batchEmbedContents)$/.exec(path)?.[1];
  const generation = v1Rest !== undefined && decodes(v1Rest);
  if (generation && (request.method === 'POST' || v1Rest.includes('/'))) return 'gemini';
  if (path === '/v1/models' || /^\/v1\/models\/[^/]+$/.test(path)) {
    const has = (name: string) => request.headers.some(([header]) => header.toLowerCase() === name);
    const query = request.target.includes('?') ? new URLSearchParams(request.target.slice(request.target.indexOf('?') + 1)) : undefined;
    if (has('x-goog-api-key') || query?.get('key')) return 'gemini';
    if (has('anthropic-version') || (has('x-api-key') && !has('authorization'))) return 'anthropic';
  }
  return 'openai';
}

function decodes(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

function checkSuccessBody(response: WireResponse, style: ErrorStyle): string[] {
  const type = response.headers['content-type'] ?? '';
  const text = () => response.body.toString('utf8');
  if (style === 'mcp') return checkMcpAnswer(response);
  if (/^application\/json/.test(type)) {
    try {
      JSON.parse(text());
    } catch {
      return [`2xx JSON body does not parse: ${preview(response)}`];
    }
    return [];
  }
  if (/^text\/event-stream/.test(type)) {
    const errorEvent = text()
      .split('\n\n')
      .find(
        (frame) =>
          /^event: *error$/m.test(frame) ||
          /^data: *\{"type":"error"/m.test(frame) ||
          /^data: *\{"error":/m.test(frame) ||
          /"type":"response\.failed"/.test(frame),
      );
    return errorEvent ? [`2xx stream carries an error event: ${errorEvent.slice(0, 400)}`] : [];
  }
  return [];
}

/** A 2xx of `/mcp`: JSON, or SSE frames of JSON-RPC messages; none an internal error. */
function checkMcpAnswer(response: WireResponse): string[] {
  const type = response.headers['content-type'] ?? '';
  const text = response.body.toString('utf8');
  let messages: unknown[];
  try {
    if (/^application\/json/.test(type)) messages = [JSON.parse(text)].flat();
    else if (/^text\/event-stream/.test(type)) {
      messages = text
        .split('\n')
        .filter((line) => line.startsWith('data:') && line.slice(5).trim() !== '')
        .map((line) => JSON.parse(line.slice(5)));
    } else messages = [];
  } catch {
    return [`2xx MCP answer does not parse: ${preview(response)}`];
  }
  const internal = messages.find((message) => isObject(message) && isObject(message.error) && message.error.code === -32603);
  return internal ? [`2xx MCP answer holds an internal error: ${JSON.stringify(internal).slice(0, 400)}`] : [];
}

function checkExpectations(testCase: FuzzCase, response: WireResponse, style: ErrorStyle): string[] {
  const { expect } = testCase;
  if (!expect) return [];
  const problems: string[] = [];
  const statuses = expect.status === undefined ? undefined : Array.isArray(expect.status) ? expect.status : [expect.status];
  if (statuses && !statuses.includes(response.status)) problems.push(`expected status ${statuses.join(' or ')}, got ${response.status}: ${preview(response)}`);
  if (expect.param !== undefined || expect.code !== undefined || expect.message !== undefined) {
    let error: Record<string, unknown> | undefined;
    try {
      const body = JSON.parse(response.body.toString('utf8')) as unknown;
      error = isObject(body) && isObject(body.error) ? body.error : undefined;
    } catch {
      error = undefined;
    }
    // Anthropic's error body has neither `param` nor `code`: a case expecting them is mistaken;
    // a JSON-RPC error has the gateway's code in `data.code`, and no field.
    if (style === 'mcp') {
      if (expect.param !== undefined) problems.push('expect.param does not apply to a JSON-RPC error');
      const data = error && isObject(error.data) ? error.data : undefined;
      if (expect.code !== undefined && data?.code !== expect.code) problems.push(`expected code ${JSON.stringify(expect.code)}: ${preview(response)}`);
    } else if (style === 'anthropic' && (expect.param !== undefined || expect.code !== undefined))
      problems.push('expect.param and expect.code do not apply to an Anthropic error body; use expect.message');
    else if (style === 'gemini') {
      if (expect.param !== undefined && (error ? googleParam(error) : null) !== expect.param)
        problems.push(`expected field ${JSON.stringify(expect.param)}: ${preview(response)}`);
      if (expect.code !== undefined && (error ? googleCode(error) : null) !== expect.code)
        problems.push(`expected reason ${JSON.stringify(expect.code)}: ${preview(response)}`);
    } else {
      if (expect.param !== undefined && error?.param !== expect.param) problems.push(`expected param ${JSON.stringify(expect.param)}: ${preview(response)}`);
      if (expect.code !== undefined && error?.code !== expect.code) problems.push(`expected code ${JSON.stringify(expect.code)}: ${preview(response)}`);
    }
    if (expect.message !== undefined && !(typeof error?.message === 'string' && error.message.includes(expect.message))) {
      problems.push(`expected the message to contain ${JSON.stringify(expect.message)}: ${preview(response)}`);
    }
  }
  return problems;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function preview(response: WireResponse): string {
  const text = response.body.toString('utf8');
  return `${response.status} ${text.length > 300 ? `${text.slice(0, 300)}…` : text}`;
}
