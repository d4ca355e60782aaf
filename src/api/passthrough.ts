import { createParser } from 'eventsource-parser';
import { type GatewayError, isAbortError, toPublicError, upstreamInvalidResponse, upstreamStreamCut } from '../errors.js';
import { jsonTextResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { mergeUsage, type IRUsage } from '../protocols/ir.js';
import type { StreamTap, TextBody } from '../protocols/codec.js';
import { parseAnswer } from '../providers/http/get-json.js';
import { readText, transportError } from '../providers/http/upstream-client.js';
import { type BodySource, pullResponse } from '../http/pull-body.js';
import { SSE_HEADERS } from '../http/sse-response.js';
import type { CallContext, Provider, UpstreamReply } from '../providers/provider.js';
import type { RequestLedger } from '../policy/request-ledger.js';
import { replaceTopLevelFields } from '../http/replace-json-model.js';
import { rewrittenFields } from './text-request.js';
import { dropUsageFrames, withUsageRequested } from './usage-frames.js';

/**
 * The fast, faithful path: the client's body goes upstream unchanged but for `model`, and the
 * upstream's answer comes back byte for byte. Usage is read on the way for the usage hook.
 * A stream that fails or ends without its terminal event gets the protocol's error frame
 * appended, so a cut upstream never looks like a completed answer.
 */
export async function passthroughText(
  provider: Provider,
  tap: StreamTap,
  requestBody: TextBody,
  context: RouteContext,
  call: CallContext,
  ledger: RequestLedger,
): Promise<Response> {
  const body = requestBody.parsed;
  const { reply, stripUsageFrames } = await forwardClientBody(provider, tap, requestBody, context, call);

  if (body.stream !== true) {
    const text = await readText(reply.body, context.options.limits.jsonBodyBytes, call.upstreamWait);
    // A cut body, a proxy's page or an error sent with a 200 is a failure, not an answer to pass on.
    ledger.finish({ status: 'ok', ...answerFacts(tap, parseAnswer(text, reply.redact)), answerText: text });
    return jsonTextResponse(text, reply.status, { 'content-type': reply.contentType });
  }

  // Answered once the first bytes came, as a translated stream is once its first event did: until
  // then the attempt may still fail over (a first-byte timeout, a connection cut before it).
  const upstream = await withFirstChunkRead(reply.body);
  return pullResponse(tappedStream(upstream, tap, ledger, context, stripUsageFrames), reply.status, SSE_HEADERS);
}

/**
 * Sends the client's body upstream as passthrough does: its own text with only the model (and
 * what the gateway rewrote) replaced, usage asked for on a Chat stream (`stripUsageFrames`: the
 * client did not ask for it).
 */
export async function forwardClientBody(
  provider: Provider,
  tap: StreamTap,
  requestBody: TextBody,
  context: RouteContext,
  call: CallContext,
): Promise<{ reply: UpstreamReply; stripUsageFrames: boolean }> {
  const body = requestBody.parsed;
  const asked = tap.protocol === 'chat' ? withUsageRequested(body) : { body, stripUsageFrames: false };
  const upstreamBody = { ...asked.body, model: call.model.upstreamModel ?? call.model.id };
  // The client's own text with only the changed fields replaced: serializing a large body again
  // would block the event loop for tens of milliseconds.
  const changed = { model: upstreamBody.model, ...rewrittenFields(body), ...(asked.body !== body ? { stream_options: asked.body.stream_options } : {}) };
  // Gemini names the model in the URL: its provider sends the body as read and checked, the
  // upstream model in the path.
  const rawBody = requestBody.text === undefined || tap.protocol === 'gemini' ? undefined : replaceTopLevelFields(requestBody.text, changed);
  const reply = await provider.text!.passthrough!(
    { protocol: tap.protocol, body: upstreamBody, ...(rawBody ? { rawBody } : {}), headers: context.request.headers },
    call,
  );
  return { reply, stripUsageFrames: asked.stripUsageFrames };
}

/** The body, its first chunk already read (a transport failure then is thrown as a `GatewayError`). */
async function withFirstChunkRead(body: AsyncIterable<Uint8Array>): Promise<AsyncIterable<Uint8Array>> {
  const iterator = body[Symbol.asyncIterator]();
  let first: IteratorResult<Uint8Array> | undefined;
  try {
    first = await iterator.next();
  } catch (error) {
    throw transportError(error);
  }
  const rest: AsyncIterator<Uint8Array> = {
    next() {
      if (first === undefined) return iterator.next();
      const read = first;
      first = undefined;
      return Promise.resolve(read);
    },
    return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
  };
  return { [Symbol.asyncIterator]: () => rest };
}

/** Usage, id, finish reason and output item ids of a JSON answer, for the ledger. */
function answerFacts(tap: StreamTap, answer: unknown): { usage?: IRUsage; responseId?: string; finishReason?: string; outputItemIds?: string[] } {
  const json = answer as { id?: unknown; stop_reason?: unknown; status?: unknown; choices?: { finish_reason?: unknown }[] };
  const finishReason = (Array.isArray(json.choices) ? json.choices[0]?.finish_reason : undefined) ?? json.stop_reason ?? json.status;
  return {
    usage: tap.usageOfJson(json),
    ...(typeof json.id === 'string' ? { responseId: json.id } : {}),
    ...(typeof finishReason === 'string' ? { finishReason } : {}),
    ...(tap.outputItemIdsOfJson ? { outputItemIds: tap.outputItemIdsOfJson(json) } : {}),
  };
}

/**
 * Pipes the upstream SSE bytes through, one pass per read: the whole frames of a read are
 * forwarded as they are, in one write. They are parsed only when they hold one of the protocol
 * tap's markers (usage, the terminal event, an error) or do not look like plain JSON events;
 * the rest is checked by bytes alone. Only whole frames are forwarded, so an error frame
 * appended after a cut is never glued to half a frame.
 */
function tappedStream(
  upstream: AsyncIterable<Uint8Array>,
  tap: StreamTap,
  ledger: RequestLedger,
  context: RouteContext,
  stripUsageFrames: boolean,
): BodySource {
  const iterator = upstream[Symbol.asyncIterator]();
  let usage: IRUsage = {};
  let terminal = false;
  let failed = false;
  let done = false;
  /** Bytes after the last whole frame, kept as read (a long frame is never copied chunk after chunk). */
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  let unreadable = false;
  /** The upstream's error event, and where it is in the frames being forwarded, when it can be restamped. */
  let errorData: string | undefined;
  let errorFrame: { start: number; end: number } | undefined;
  const parser = createParser({
    onEvent(message) {
      if (!readable(message.data)) unreadable = true;
      const seen = tap.observe(message.event, message.data);
      if (seen.usage) usage = mergeUsage(usage, seen.usage);
      if (seen.terminal) terminal = true;
      if (seen.failed && !failed) errorData = message.data;
      if (seen.failed) failed = true;
      // Announced as the frame is read, before it is passed on: a client that asks for the
      // response next finds it recorded.
      if (seen.responseId) ledger.identified(seen.responseId, seen.outputItemIds);
    },
  });
  const observe = (frames: Uint8Array) => {
    const bytes = Buffer.from(frames.buffer, frames.byteOffset, frames.byteLength);
    // Scanned as latin1: one byte a character, and a UTF-8 sequence never holds an ASCII byte,
    // so an ASCII mark is found at the same index as in the bytes.
    const text = bytes.toString('latin1');
    if (!plainFrames(text)) {
      parser.feed(bytes.toString('utf8'));
      return;
    }
    // Plain frames: only those holding a mark are parsed, each once, in order.
    const marker = tap.marker;
    marker.lastIndex = 0;
    for (let hit = marker.exec(text); hit; hit = marker.exec(text)) {
      const blank = text.lastIndexOf('\n\n', hit.index);
      const start = blank < 0 ? 0 : blank + 2;
      const end = text.indexOf('\n\n', hit.index) + 2;
      parser.feed(bytes.toString('utf8', start, end));
      if (errorData !== undefined && errorFrame === undefined) errorFrame = { start, end };
      marker.lastIndex = end;
    }
  };
  /** The frames with the upstream's error event restamped with the answer's request id (`StreamTap.restampedError`). */
  const restamped = (frames: Uint8Array): Uint8Array => {
    const at = errorFrame;
    const frame = at && errorData !== undefined ? tap.restampedError?.(errorData, context.requestId) : undefined;
    // One error event a stream: found in these frames or not at all (a frame parsed whole is forwarded as it came).
    errorData = undefined;
    errorFrame = undefined;
    if (!at || frame === undefined) return frames;
    return Buffer.concat([frames.subarray(0, at.start), Buffer.from(frame), frames.subarray(at.end)]);
  };
  const report = (status: 'ok' | 'error', error?: GatewayError) => {
    if (done) return;
    done = true;
    const cancelled = context.signal.aborted;
    ledger.finish({ status, usage, ...(error ? { error } : {}), ...(cancelled ? { cancelled } : {}) });
  };
  const fail = (error: GatewayError): string => {
    if (error.status >= 500) context.options.logger.warn('passthrough stream failed', { requestId: context.requestId, message: error.message });
    report('error', error);
    return tap.errorFrame(error, context.requestId);
  };
  /** Fails the stream for a fault the upstream's bytes show, and hangs up on the upstream. */
  const abandon = (message: string): string => {
    iterator.return?.(undefined)?.catch(() => {});
    return fail(upstreamInvalidResponse(message));
  };

  return {
    async pull() {
      if (done) return null;
      try {
        for (;;) {
          const { value, done: ended } = await iterator.next();
          if (ended) {
            const rest = heldBytes > 0 ? join(held) : undefined;
            // A last frame may lack its blank line.
            if (rest) observe(rest);
            parser.feed('\n\n');
            if (unreadable) return fail(upstreamInvalidResponse(INVALID_EVENT));
            if (!terminal) return fail(upstreamStreamCut());
            const writes = ledger.identifiedWrites();
            if (writes) await writes;
            report(failed ? 'error' : 'ok');
            return rest ? (stripUsageFrames ? dropUsageFrames(restamped(rest)) : restamped(rest)) : null;
          }
          // Only the new chunk is searched for a frame end: a long frame costs linear time.
          const cut = frameEndIn(held, value);
          if (cut === 0) {
            held.push(value);
            heldBytes += value.length;
            // A frame that never ends (no blank line) must not grow in memory without bound.
            if (heldBytes > context.options.limits.jsonBodyBytes) return abandon('The upstream sent a stream event larger than the gateway accepts.');
            continue;
          }
          const frames = heldBytes === 0 && cut === value.length ? value : join([...held, value.subarray(0, cut)]);
          held = cut < value.length ? [value.subarray(cut)] : [];
          heldBytes = value.length - cut;
          observe(frames);
          // An event no client can parse is not passed on: the stream ends with an error there.
          if (unreadable) return abandon(INVALID_EVENT);
          // The frame that told the answer's id waits for its record to be written (no await
          // otherwise: a microtask per chunk).
          const writes = ledger.identifiedWrites();
          if (writes) await writes;
          const sent = stripUsageFrames ? dropUsageFrames(restamped(frames)) : restamped(frames);
          if (sent.length === 0) continue;
          ledger.firstByte();
          return sent;
        }
      } catch (error) {
        const failure = transportError(error);
        // A client that left is not an upstream failure: nothing to send, nothing to log.
        if (isAbortError(failure) && context.signal.aborted) {
          report('error');
          return null;
        }
        return fail(toPublicError(failure));
      }
    },
    cancel() {
      report(terminal && !failed ? 'ok' : 'error');
      iterator.return?.(undefined)?.catch(() => {});
    },
  };
}

/**
 * True when every frame in `text` (whole frames, one character a byte) is LF-ended and either
 * carries one `data:` line holding a JSON object (as far as its first and last characters tell)
 * or `[DONE]`, or is a comment: such frames need no parse unless the tap's marker is in them.
 * Anything else (CR line ends, several data lines) says false, and the frames are parsed.
 */
function plainFrames(text: string): boolean {
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n\n', start);
    if (end < 0) return false;
    if (!(text[start] === ':' && text.indexOf('\n', start) === end) && !plainData(text, start, end)) return false;
    start = end + 2;
  }
  return true;
}

/** One `data:` line in the frame, holding `{…}` or `[DONE]`. */
function plainData(text: string, start: number, end: number): boolean {
  const data = text.indexOf('data:', start);
  if (data < 0 || data > end || (data > start && text[data - 1] !== '\n')) return false;
  const next = text.indexOf('\ndata:', data);
  if (next >= 0 && next < end) return false;
  const value = text[data + 5] === ' ' ? data + 6 : data + 5;
  if (text[value] === '{') return text[end - 1] === '}';
  return end - value === 6 && text.startsWith('[DONE]', value);
}

const INVALID_EVENT = 'The upstream sent a stream event that is not valid JSON.';

/** Every protocol's event data is a JSON object, or Chat's `[DONE]`; anything else breaks the client's parser. */
function readable(data: string): boolean {
  const text = data.trim();
  return text === '[DONE]' || (text.startsWith('{') && text.endsWith('}'));
}

const LF = 10;
const CR = 13;
const isLineEnd = (byte: number | undefined) => byte === LF || byte === CR;

/**
 * Index just past the last blank line in the chunk: the end of its last whole frame, or 0. SSE
 * lines end in LF, CRLF or a lone CR, so a blank line is two line ends in a row, in any mix
 * (`\n\n`, `\r\n\r\n`, `\r\r`). A CR that ends the chunk waits for the next read: it may be
 * the first half of a CRLF, which must not be cut in two (a client's parser waits for the next
 * byte there too, so this costs it nothing).
 */
function lastFrameEnd(chunk: Uint8Array): number {
  for (let i = chunk.length - 1; i >= 1; i--) {
    const byte = chunk[i];
    if (!isLineEnd(byte) || (byte === CR && i === chunk.length - 1)) continue;
    // A CRLF is one line end: the one before it ends before its CR.
    const previous = byte === LF && chunk[i - 1] === CR ? i - 2 : i - 1;
    if (previous >= 0 && isLineEnd(chunk[previous])) return i + 1;
  }
  return 0;
}

/**
 * Index in `chunk` just past its last frame end, or 0. The held bytes hold no frame end, but
 * their last bytes may start one (a blank line split across two reads), so they are looked at too.
 */
function frameEndIn(held: readonly Uint8Array[], chunk: Uint8Array): number {
  const tail: number[] = [];
  for (let i = held.length - 1; i >= 0 && tail.length < 3; i--) {
    const piece = held[i]!;
    for (let j = piece.length - 1; j >= 0 && tail.length < 3; j--) tail.unshift(piece[j]!);
  }
  if (tail.length === 0) return lastFrameEnd(chunk);
  const end = lastFrameEnd(join([Uint8Array.from(tail), chunk]));
  return Math.max(0, end - tail.length);
}

function join(pieces: readonly Uint8Array[]): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(pieces.reduce((size, piece) => size + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
