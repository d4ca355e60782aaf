import { Readable } from 'node:stream';
import { Response as HostResponse } from '@whatwg-node/server';

/** Where a streamed body's chunks come from, one pull at a time. */
export interface BodySource {
  /** The next chunk, or null at the end. Never rejects: a failure is written as the protocol's error frame first. */
  pull(): Promise<string | Uint8Array | null>;
  /** The client left before the end. */
  cancel(): void;
}

/** Whether the host's Response is whatwg-node's Node one, whose server pipes a Node Readable body straight into the socket. */
const nodeHost = HostResponse !== globalThis.Response;
const encoder = new TextEncoder();
/** The source of each response built here, for a reader on the way out (the response cache). */
const sources = new WeakMap<Response, BodySource>();

/**
 * A streamed response pulling from `source`: each pull is one write, and nothing is pulled
 * before the transport asks (a slow client slows the upstream instead of filling memory). Under
 * Node the body is a Node `Readable` that whatwg-node pipes into the `ServerResponse` itself,
 * with no chain of Web streams in between; elsewhere (Bun, Deno, a Web host) it is a
 * `ReadableStream`.
 */
export function pullResponse(source: BodySource, status: number, headers: Record<string, string>): Response {
  // whatwg-node's Node Response takes a Node Readable body (its types only list Web ones).
  const response = nodeHost
    ? new HostResponse(nodeBody(source) as unknown as BodyInit, { status, headers })
    : new Response(webBody(source), { status, headers });
  sources.set(response, source);
  return response;
}

/**
 * The source of a response built by `pullResponse`, so a reader can wrap it with no Web stream in
 * between; undefined for any other response. Whoever takes it answers with a new response.
 */
export function bodySourceOf(response: Response): BodySource | undefined {
  return sources.get(response);
}

function nodeBody(source: BodySource): Readable {
  let ended = false;
  return new Readable({
    highWaterMark: 0,
    read() {
      source.pull().then(
        (chunk) => {
          if (this.destroyed) return;
          if (chunk === null) ended = true;
          this.push(chunk);
        },
        (error: unknown) => this.destroy(error as Error),
      );
    },
    destroy(error, callback) {
      if (!ended) {
        ended = true;
        source.cancel();
      }
      callback(error);
    },
  });
}

function webBody(source: BodySource): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const chunk = await source.pull();
        if (chunk === null) controller.close();
        else controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      },
      cancel() {
        source.cancel();
      },
    },
    { highWaterMark: 0 },
  );
}
