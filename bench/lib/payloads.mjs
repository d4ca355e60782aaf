// What each arm is sent: the request bytes for a cell, and how to check its answer.
import { randomBytes } from 'node:crypto';
import { buildRequest } from './http-client.mjs';
import { idPrefix, ids, terminalMarker } from './wire.mjs';

export const BENCH_KEY = 'sk-bench';
export const MOCK_KEY = 'sk-mock';
/** The gateway arms with an output guardrail (`gateway-server.mjs --guardrails <type>`), by arm name. */
export const GUARDRAIL_ARMS = { 'infergate-regex': 'regex', 'infergate-secrets': 'secrets' };

/** @typedef {'chat' | 'messages' | 'responses'} Protocol */

/**
 * The gateway cells: which protocol the client speaks, which model (and so which upstream).
 * @type {Record<string, { client: Protocol, upstream: Protocol, model: string, passthrough: boolean, label: string }>}
 */
export const cells = {
  'chat-pass': { client: 'chat', upstream: 'chat', model: 'bench-chat', passthrough: true, label: 'chat → chat (passthrough)' },
  'messages-to-chat': { client: 'messages', upstream: 'chat', model: 'bench-chat', passthrough: false, label: 'Anthropic client → chat upstream' },
  'responses-to-chat': { client: 'responses', upstream: 'chat', model: 'bench-chat', passthrough: false, label: 'Responses client → chat upstream' },
  'chat-to-messages': { client: 'chat', upstream: 'messages', model: 'bench-anthropic', passthrough: false, label: 'chat client → Anthropic upstream' },
  'responses-pass': { client: 'responses', upstream: 'responses', model: 'bench-responses', passthrough: true, label: 'Responses → Responses (passthrough)' },
  'messages-pass': { client: 'messages', upstream: 'messages', model: 'bench-anthropic', passthrough: true, label: 'Messages → Messages (passthrough)' },
  'responses-to-messages': {
    client: 'responses',
    upstream: 'messages',
    model: 'bench-anthropic',
    passthrough: false,
    label: 'Responses client → Anthropic upstream',
  },
  'chat-to-responses': { client: 'chat', upstream: 'responses', model: 'bench-responses-only', passthrough: false, label: 'chat client → Responses upstream' },
  'messages-to-responses': {
    client: 'messages',
    upstream: 'responses',
    model: 'bench-responses-only',
    passthrough: false,
    label: 'Anthropic client → Responses upstream',
  },
};

/** @type {Record<Protocol, string>} */
const paths = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };

const SYSTEM = 'You are a terse assistant. Answer in one short sentence.';
const DEFAULT_PROMPT = 'Name three colours of the rainbow, and say which one has the shortest wavelength.';

/**
 * A request body in a protocol.
 * @param {Protocol} protocol
 * @param {string} model
 * @param {boolean} stream
 * @param {{ imageBase64?: string, prompt?: string }} [extra]
 */
export function body(protocol, model, stream, extra = {}) {
  const image = extra.imageBase64;
  const prompt = extra.prompt ?? DEFAULT_PROMPT;
  if (protocol === 'chat') {
    const user = image
      ? [
          { type: 'text', text: prompt },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${image}` } },
        ]
      : prompt;
    return JSON.stringify({
      model,
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: user },
      ],
      max_tokens: 64,
      temperature: 0.2,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
  }
  if (protocol === 'messages') {
    const content = image
      ? [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: image } },
          { type: 'text', text: prompt },
        ]
      : prompt;
    return JSON.stringify({
      model,
      max_tokens: 64,
      system: SYSTEM,
      messages: [{ role: 'user', content }],
      temperature: 0.2,
      ...(stream ? { stream: true } : {}),
    });
  }
  const input = image
    ? [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: prompt },
            { type: 'input_image', image_url: `data:image/png;base64,${image}`, detail: 'auto' },
          ],
        },
      ]
    : prompt;
  return JSON.stringify({ model, instructions: SYSTEM, input, max_output_tokens: 64, temperature: 0.2, ...(stream ? { stream: true } : {}) });
}

/** @param {Protocol} protocol @param {string} key @returns {Record<string, string>} */
function authHeaders(protocol, key) {
  return protocol === 'messages'
    ? { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }
    : { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
}

/**
 * @typedef {object} Target
 * @property {Buffer} request   the bytes to send
 * @property {Protocol} client  protocol of the answer
 * @property {string} mustContain
 * @property {string} [mustNotContain]
 * @property {string} terminal
 */

/**
 * The request bytes and answer checks for an arm on a cell.
 * Direct and floor arms speak the cell's upstream protocol to the mock (what a gateway would send);
 * the gateway arms speak the client's. A passed-through answer must carry the mock's id as it is;
 * a translated one must not (its id is re-minted with the client's prefix).
 * @param {{ arm: string, cell: string, stream: boolean, port: number, mockOrigin: string, imageBase64?: string, prompt?: string }} options
 */
export function target({ arm, cell, stream, port, mockOrigin, imageBase64, prompt }) {
  const spec = cells[cell];
  if (!spec) throw new Error(`unknown cell ${cell}`);
  const host = `127.0.0.1:${port}`;
  const extra = { ...(imageBase64 ? { imageBase64 } : {}), ...(prompt ? { prompt } : {}) };
  if (arm === 'direct' || arm === 'floor') {
    const protocol = spec.upstream;
    return {
      request: buildRequest(paths[protocol], authHeaders(protocol, MOCK_KEY), body(protocol, 'mock-model', stream, extra), host),
      client: protocol,
      mustContain: ids[protocol],
      terminal: terminalMarker[protocol],
    };
  }
  if (arm === 'peer') {
    // Portkey's open-source gateway, told where the upstream is by its headers.
    if (spec.client !== 'chat' || spec.upstream !== 'chat') throw new Error('the peer arm runs the chat passthrough cell only');
    const headers = { ...authHeaders('chat', MOCK_KEY), 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mockOrigin}/v1` };
    return {
      request: buildRequest(paths.chat, headers, body('chat', 'mock-model', stream, extra), host),
      client: 'chat',
      mustContain: idPrefix.chat,
      terminal: terminalMarker.chat,
    };
  }
  if (arm === 'ccr') {
    // claude-code-router, configured (bench/lib/peer.mjs) with the mock as its one chat provider. It
    // sends the request infergate gets, and translates the answer but keeps the upstream's id in a
    // JSON answer: the check is the answer's shape — a Messages answer, no chat completion in it.
    if (spec.client !== 'messages' || spec.upstream !== 'chat') throw new Error('the claude-code-router arm runs the messages-to-chat cell only');
    return {
      request: buildRequest(paths.messages, authHeaders('messages', BENCH_KEY), body('messages', spec.model, stream, extra), host),
      client: 'messages',
      mustContain: '"type":"message"',
      mustNotContain: '"object":"chat.completion',
      terminal: terminalMarker.messages,
    };
  }
  // An output guardrail decodes every answer, even on a passthrough cell: the client's id prefix is all that is sure.
  const passthrough = spec.passthrough && !Object.hasOwn(GUARDRAIL_ARMS, arm);
  return {
    request: buildRequest(paths[spec.client], authHeaders(spec.client, BENCH_KEY), body(spec.client, spec.model, stream, extra), host),
    client: spec.client,
    mustContain: passthrough ? ids[spec.upstream] : idPrefix[spec.client],
    ...(spec.passthrough ? {} : { mustNotContain: ids[spec.upstream] }),
    terminal: terminalMarker[spec.client],
  };
}

/** Random bytes of an "image", base64 (what a client would inline). @param {number} bytes */
export function imageBase64(bytes) {
  return randomBytes(bytes).toString('base64');
}

/**
 * Why an answer fails the arm's checks, or undefined when it passes.
 * @param {string | undefined} text
 * @param {{ mustContain: string, mustNotContain?: string }} check
 */
export function checkAnswer(text, check) {
  if (text === undefined) return 'no answer captured';
  if (!text.includes(check.mustContain)) return `answer lacks ${JSON.stringify(check.mustContain)}: ${text.slice(0, 160)}`;
  if (check.mustNotContain && text.includes(check.mustNotContain)) {
    return `answer carries the upstream's ${JSON.stringify(check.mustNotContain)}: it was passed through, not translated`;
  }
  return undefined;
}
