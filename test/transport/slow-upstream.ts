import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the upstream saw of one streamed request, found by a marker in its last message. */
export interface UpstreamCall {
  chunksSent: number;
  /** `early`: the gateway closed the connection before the stream's end; `done`: it was all sent. */
  ended?: 'early' | 'done';
}

export interface SlowUpstream {
  /** Base URL with `/v1`, as the openai provider takes it. */
  baseURL: string;
  call(marker: string): UpstreamCall | undefined;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible Chat Completions upstream on loopback that streams slowly: one chunk every
 * `intervalMs` for `chunks` chunks, so a client that leaves mid-stream is seen here as a
 * connection closed early. That is how the transport suite checks that an abort reached the
 * upstream call, on every host, whatever process the gateway runs in.
 */
export async function startSlowUpstream(options: { intervalMs?: number; chunks?: number } = {}): Promise<SlowUpstream> {
  const intervalMs = options.intervalMs ?? 50;
  const chunks = options.chunks ?? 400;
  const calls = new Map<string, UpstreamCall>();
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (part: string) => (raw += part));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return void res.writeHead(404).end();
      const body = JSON.parse(raw) as { model: string; stream?: boolean; messages: { content: string }[] };
      const marker = String(body.messages.at(-1)?.content ?? '');
      const call: UpstreamCall = { chunksSent: 0 };
      calls.set(marker, call);
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(completion(body.model)));
        call.ended = 'done';
        return;
      }
      stream(res, body.model, call);
    });
  });

  function stream(res: ServerResponse, model: string, call: UpstreamCall): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const timer = setInterval(() => {
      if (call.chunksSent === chunks) {
        clearInterval(timer);
        res.end(`data: ${JSON.stringify(chunk(model, {}, 'stop'))}\n\ndata: [DONE]\n\n`);
        call.ended = 'done';
        return;
      }
      res.write(`data: ${JSON.stringify(chunk(model, { content: `tick ${call.chunksSent} ` }, null))}\n\n`);
      call.chunksSent++;
    }, intervalMs);
    res.on('close', () => {
      clearInterval(timer);
      call.ended ??= 'early';
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    call: (marker) => calls.get(marker),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function chunk(model: string, delta: Record<string, unknown>, finish: string | null) {
  return { id: 'chatcmpl-slow', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

function completion(model: string) {
  return {
    id: 'chatcmpl-slow',
    object: 'chat.completion',
    created: 0,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'slow but sure' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
  };
}
