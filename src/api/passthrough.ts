import { Response as HostResponse } from '@whatwg-node/server';
import { createParser } from 'eventsource-parser';
import { GatewayError, isAbortError, toPublicError } from '../errors.js';
import type { RouteContext } from '../http/route.js';
import { mergeUsage, type IRUsage } from '../protocols/ir.js';
import type { StreamTap } from '../protocols/stream-tap.js';
import { readText, upstreamChunks } from '../providers/http/upstream-client.js';
import type { CallContext, Provider } from '../providers/provider.js';
import { reportUsage, type UsageBase } from '../policy/usage-report.js';

/**
 * The fast, faithful path: the client's body goes upstream unchanged but for `model`, and the
 * upstream's answer comes back byte for byte. Usage is read on the way for the usage hook.
 * A stream that fails or ends without its terminal event gets the protocol's error frame
 * appended, so a cut upstream never looks like a completed answer.
 */
export async function passthroughText(
  provider: Provider,
  tap: StreamTap,
  body: Record<string, unknown>,
  context: RouteContext,
  call: CallContext,
  usageBase: UsageBase,
): Promise<Response> {
  const upstreamBody = { ...body, model: call.model.upstreamModel ?? call.model.id };
  const reply = await provider.passthrough!({ protocol: tap.protocol, body: upstreamBody, headers: context.request.headers }, call);

  if (body.stream !== true) {
    const text = await readText(reply.body, context.options.limits.jsonBodyBytes);
    // Parsing the whole answer only to read its usage is wasted when nobody listens.
    if (context.options.hooks.onUsage) reportUsage(usageBase, usageOfJson(tap, text), 'ok');
    // The host's Response (@whatwg-node's on Node): a string body is written in one go with a
    // content-length, where a global Response would be read back through a web stream, chunked.
    return new HostResponse(text, { status: reply.status, headers: { 'content-type': reply.contentType } });
  }

  return new Response(tappedStream(reply.body, tap, usageBase, context), {
    status: reply.status,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  });
}

function usageOfJson(tap: StreamTap, text: string): IRUsage {
  try {
    return tap.usageOfJson(JSON.parse(text));
  } catch {
    return {};
  }
}

/**
 * Pipes the upstream SSE bytes through, one pass per chunk: the chunk is forwarded as it is and
 * fed to an SSE parser that only reads usage and watches for the terminal event. Only whole
 * frames are forwarded, so an error frame appended after a cut is never glued to half a frame.
 */
function tappedStream(upstream: AsyncIterable<Uint8Array>, tap: StreamTap, usageBase: UsageBase, context: RouteContext): ReadableStream<Uint8Array> {
  const iterator = upstreamChunks(upstream)[Symbol.asyncIterator]();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let usage: IRUsage = {};
  let terminal = false;
  let failed = false;
  let reported = false;
  let held: Uint8Array | undefined;
  const parser = createParser({
    onEvent(message) {
      const seen = tap.observe(message.event, message.data);
      if (seen.usage) usage = mergeUsage(usage, seen.usage);
      if (seen.terminal) terminal = true;
      if (seen.failed) failed = true;
    },
  });
  const report = (status: 'ok' | 'error') => {
    if (reported) return;
    reported = true;
    reportUsage(usageBase, usage, status);
  };
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: GatewayError) => {
    if (error.status >= 500) context.options.logger.warn('passthrough stream failed', { requestId: context.requestId, message: error.message });
    controller.enqueue(encoder.encode(tap.errorFrame(error)));
    controller.close();
    report('error');
  };

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          // Read until a whole frame can be sent: a pull that enqueues nothing is never
          // repeated (highWaterMark 0), so returning on a chunk that ends mid-frame would stall.
          for (;;) {
            const { value, done } = await iterator.next();
            if (done) {
              // Flush the parser: a last frame may lack its blank line.
              parser.feed(decoder.decode() + '\n\n');
              if (terminal) {
                if (held) controller.enqueue(held);
                controller.close();
                report(failed ? 'error' : 'ok');
              } else {
                fail(controller, new GatewayError({ status: 502, type: 'upstream_error', message: 'The upstream stream ended before the answer was complete.', code: 'upstream_stream_cut' }));
              }
              return;
            }
            parser.feed(decoder.decode(value, { stream: true }));
            const chunk = held ? concat(held, value) : value;
            const cut = lastFrameEnd(chunk);
            held = cut < chunk.length ? chunk.subarray(cut) : undefined;
            if (cut > 0) {
              controller.enqueue(cut === chunk.length ? chunk : chunk.subarray(0, cut));
              return;
            }
          }
        } catch (error) {
          // A client that left is not an upstream failure: nothing to send, nothing to log.
          if (isAbortError(error) && context.signal.aborted) {
            report('error');
            try {
              controller.close();
            } catch {
              // Already cancelled by the transport.
            }
            return;
          }
          fail(controller, toPublicError(error));
        }
      },
      async cancel() {
        report(terminal && !failed ? 'ok' : 'error');
        await iterator.return?.(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Index just past the last blank line (`\n\n` or `\r\n\r\n`) in the chunk: the end of its last whole frame. */
function lastFrameEnd(chunk: Uint8Array): number {
  for (let i = chunk.length - 1; i >= 1; i--) {
    if (chunk[i] === 10 && (chunk[i - 1] === 10 || (chunk[i - 1] === 13 && i >= 3 && chunk[i - 2] === 10))) return i + 1;
  }
  return 0;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
