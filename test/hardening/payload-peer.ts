// The other side of the large-payload test, in a process of its own (run with `node --import tsx`):
// the strict upstream fakes and the client that sends the big requests (and the small hostile
// schemas of bench/large-payloads.mjs, issue 22). Building a 20 MB body,
// sending it and parsing it again upstream all block an event loop; here they block this one,
// never the gateway's, so the delay measured in the test process is the gateway's own.
import { createHash, randomFillSync } from 'node:crypto';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeGemini } from '../fakes/fake-gemini.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import { startFakeOpenAIMedia, requestsTo } from '../fakes/fake-openai-media.js';
import { definitionChain, selfReference } from '../helpers/hostile-schemas.js';

export type PeerCommand =
  | { id: number; kind: 'image'; url: string; model: string; client: ImageClient; upstream: ImageUpstream; imageBytes: number }
  | { id: number; kind: 'edit-upload'; url: string; model: string; fileBytes: number }
  | { id: number; kind: 'schema'; url: string; model: string; schema: HostileSchema; tools: number }
  | { id: number; kind: 'close' };

/** The protocol the big image request is sent in, and the one its upstream fake speaks. */
export type ImageClient = 'chat' | 'messages' | 'responses';
export type ImageUpstream = 'chat' | 'anthropic' | 'responses';
/** The schemas of code-review findings 1 and 2 (`self-reference-3` is 369 bytes, `-6` 535), and chains past the work budget. */
export type HostileSchema = 'self-reference-3' | 'self-reference-6' | 'chain-12x3' | 'chain-5x20' | 'chain-8x3';

const HOSTILE_SCHEMAS: Record<HostileSchema, () => Record<string, unknown>> = {
  'self-reference-3': () => selfReference(3),
  'self-reference-6': () => selfReference(6),
  'chain-12x3': () => definitionChain(12, 3),
  'chain-5x20': () => definitionChain(5, 20),
  'chain-8x3': () => definitionChain(8, 3),
};

export interface PeerResult {
  id: number;
  status: number;
  /** The start of the gateway's answer, for a failure message. */
  answer: string;
  /** Bytes of the request body (JSON), or of the uploaded file. */
  sentBytes: number;
  sentHash: string;
  /** Hash of what the upstream fake received in the image's place; undefined when it got nothing. */
  receivedHash: string | undefined;
  /** The model id the upstream received. */
  upstreamModel: string | undefined;
  latencyMs: number;
}

export interface PeerReady {
  ready: true;
  chatURL: string;
  anthropicURL: string;
  /** An OpenAI upstream that serves `/v1/responses` only. */
  responsesURL: string;
  mediaBaseURL: string;
  geminiURL: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** Random bytes behind a PNG signature: the Anthropic path sniffs the type from the first bytes. */
function fakePng(bytes: number): Buffer<ArrayBuffer> {
  const data = randomFillSync(Buffer.alloc(bytes));
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(data);
  return data;
}

const [chat, anthropic, responses, media, gemini] = await Promise.all([
  startFakeOpenAI({ endpoints: ['chat'] }),
  startFakeAnthropic(),
  startFakeOpenAI({ endpoints: ['responses'] }),
  startFakeOpenAIMedia(),
  startFakeGemini(),
]);
const fakes = { chat, anthropic, responses } satisfies Record<ImageUpstream, unknown>;
const resetFakes = () => {
  for (const fake of Object.values(fakes)) fake.reset();
};

const paths: Record<ImageClient, string> = { chat: '/v1/chat/completions', messages: '/v1/messages', responses: '/v1/responses' };

/** A request in the client's protocol: a short question and the image inline, as base64. */
function imageRequestBody(client: ImageClient, model: string, image: string): string {
  const dataURL = `data:image/png;base64,${image}`;
  const question = 'What is in this picture?';
  if (client === 'chat') {
    const content = [
      { type: 'text', text: question },
      { type: 'image_url', image_url: { url: dataURL } },
    ];
    return JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content }] });
  }
  if (client === 'messages') {
    const content = [
      { type: 'text', text: question },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: image } },
    ];
    return JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content }] });
  }
  const content = [
    { type: 'input_text', text: question },
    { type: 'input_image', image_url: dataURL, detail: 'auto' },
  ];
  return JSON.stringify({ model, max_output_tokens: 64, input: [{ role: 'user', content }] });
}

/** The base64 the upstream fake received in the image's place, in its own protocol. */
function receivedImage(upstream: ImageUpstream, body: Record<string, any> | undefined): string | undefined {
  const turns: any[] = (upstream === 'responses' ? body?.input : body?.messages) ?? [];
  const parts: any[] = turns.flatMap((turn) => (Array.isArray(turn?.content) ? turn.content : []));
  const part = parts.find((p) => p?.type === { chat: 'image_url', anthropic: 'image', responses: 'input_image' }[upstream]);
  const url: unknown = upstream === 'chat' ? part?.image_url?.url : upstream === 'responses' ? part?.image_url : undefined;
  if (typeof url === 'string') return url.replace(/^data:image\/png;base64,/, '');
  return part?.source?.data;
}

async function imageRequest(command: Extract<PeerCommand, { kind: 'image' }>): Promise<PeerResult> {
  resetFakes();
  const image = fakePng(command.imageBytes).toString('base64');
  const body = imageRequestBody(command.client, command.model, image);
  const headers: Record<string, string> =
    command.client === 'messages'
      ? { 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }
      : { authorization: 'Bearer sk-test', 'content-type': 'application/json' };
  const started = performance.now();
  const response = await fetch(`${command.url}${paths[command.client]}`, { method: 'POST', headers, body });
  const answer = await response.text();
  const latencyMs = performance.now() - started;
  const received = fakes[command.upstream].accepted().at(-1)?.body as Record<string, any> | undefined;
  const data = receivedImage(command.upstream, received);
  const result: PeerResult = {
    id: command.id,
    status: response.status,
    answer: answer.slice(0, 300),
    sentBytes: Buffer.byteLength(body),
    sentHash: sha256(image),
    receivedHash: data === undefined ? undefined : sha256(data),
    upstreamModel: received?.model,
    latencyMs,
  };
  resetFakes();
  return result;
}

async function editUpload(command: Extract<PeerCommand, { kind: 'edit-upload' }>): Promise<PeerResult> {
  media.requests.length = 0;
  const file = fakePng(command.fileBytes);
  const form = new FormData();
  form.append('model', command.model);
  form.append('prompt', 'make it blue');
  form.append('image', new Blob([file], { type: 'image/png' }), 'big.png');
  const started = performance.now();
  const response = await fetch(`${command.url}/v1/images/edits`, { method: 'POST', headers: { authorization: 'Bearer sk-test' }, body: form });
  const answer = await response.text();
  const latencyMs = performance.now() - started;
  const sent = requestsTo(media, 'POST', '/v1/images/edits').at(-1);
  const image = sent?.parts?.find((part) => part.name === 'image');
  const result: PeerResult = {
    id: command.id,
    status: response.status,
    answer: answer.slice(0, 300),
    sentBytes: file.length,
    sentHash: sha256(file),
    receivedHash: image?.data ? sha256(image.data) : undefined,
    upstreamModel: sent?.parts?.find((part) => part.name === 'model')?.value,
    latencyMs,
  };
  media.requests.length = 0;
  return result;
}

/** A chat request whose `tools` carry a hostile schema (the same one `tools` times), forcing a call. */
async function schemaRequest(command: Extract<PeerCommand, { kind: 'schema' }>): Promise<PeerResult> {
  gemini.reset();
  const parameters = HOSTILE_SCHEMAS[command.schema]();
  const tools = Array.from({ length: command.tools }, (_, i) => ({ type: 'function', function: { name: `f${i}`, parameters } }));
  const body = JSON.stringify({ model: command.model, messages: [{ role: 'user', content: 'Call f0.' }], tools, tool_choice: 'required' });
  const started = performance.now();
  const response = await fetch(`${command.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body,
  });
  const answer = await response.text();
  const latencyMs = performance.now() - started;
  return {
    id: command.id,
    status: response.status,
    answer: answer.slice(0, 300),
    sentBytes: Buffer.byteLength(body),
    sentHash: '',
    receivedHash: undefined,
    upstreamModel: undefined,
    latencyMs,
  };
}

process.on('message', (command: PeerCommand) => {
  if (command.kind === 'close') {
    void Promise.all([chat.close(), anthropic.close(), responses.close(), media.close(), gemini.close()]).then(() => process.exit(0));
    return;
  }
  const run = command.kind === 'image' ? imageRequest(command) : command.kind === 'schema' ? schemaRequest(command) : editUpload(command);
  run.then(
    (result) => process.send!(result),
    (error: unknown) => process.send!({ id: command.id, error: String((error as Error)?.stack ?? error) }),
  );
});

process.send!({
  ready: true,
  chatURL: chat.url,
  anthropicURL: anthropic.url,
  responsesURL: responses.url,
  mediaBaseURL: media.baseURL,
  geminiURL: gemini.url,
} satisfies PeerReady);
