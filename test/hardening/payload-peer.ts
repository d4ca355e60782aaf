// The other side of the large-payload test, in a process of its own (run with `node --import tsx`):
// the strict upstream fakes and the client that sends the big requests. Building a 20 MB body,
// sending it and parsing it again upstream all block an event loop; here they block this one,
// never the gateway's, so the delay measured in the test process is the gateway's own.
import { createHash, randomFillSync } from 'node:crypto';
import { startFakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI } from '../fakes/fake-openai.js';
import { startFakeOpenAIMedia, requestsTo } from '../fakes/fake-openai-media.js';

export type PeerCommand =
  | { id: number; kind: 'chat-image'; url: string; model: string; upstream: 'chat' | 'anthropic'; imageBytes: number }
  | { id: number; kind: 'edit-upload'; url: string; model: string; fileBytes: number }
  | { id: number; kind: 'close' };

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
  mediaBaseURL: string;
}

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/** Random bytes behind a PNG signature: the Anthropic path sniffs the type from the first bytes. */
function fakePng(bytes: number): Buffer<ArrayBuffer> {
  const data = randomFillSync(Buffer.alloc(bytes));
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(data);
  return data;
}

const [chat, anthropic, media] = await Promise.all([startFakeOpenAI({ endpoints: ['chat'] }), startFakeAnthropic(), startFakeOpenAIMedia()]);

async function chatImage(command: Extract<PeerCommand, { kind: 'chat-image' }>): Promise<PeerResult> {
  chat.reset();
  anthropic.reset();
  const image = fakePng(command.imageBytes).toString('base64');
  const body = JSON.stringify({
    model: command.model,
    max_tokens: 64,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${image}` } },
        ],
      },
    ],
  });
  const started = performance.now();
  const response = await fetch(`${command.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body,
  });
  const answer = await response.text();
  const latencyMs = performance.now() - started;
  const fake = command.upstream === 'chat' ? chat : anthropic;
  const received = fake.accepted().at(-1)?.body as Record<string, any> | undefined;
  const part = received?.messages?.[0]?.content?.[1];
  const data: string | undefined = command.upstream === 'chat' ? part?.image_url?.url?.replace(/^data:image\/png;base64,/, '') : part?.source?.data;
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
  chat.reset();
  anthropic.reset();
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

process.on('message', (command: PeerCommand) => {
  if (command.kind === 'close') {
    void Promise.all([chat.close(), anthropic.close(), media.close()]).then(() => process.exit(0));
    return;
  }
  const run = command.kind === 'chat-image' ? chatImage(command) : editUpload(command);
  run.then(
    (result) => process.send!(result),
    (error: unknown) => process.send!({ id: command.id, error: String((error as Error)?.stack ?? error) }),
  );
});

process.send!({ ready: true, chatURL: chat.url, anthropicURL: anthropic.url, mediaBaseURL: media.baseURL } satisfies PeerReady);
