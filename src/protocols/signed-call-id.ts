import type { IRAssistantPart, IRStreamEvent, IRToolCall } from './ir.js';
import { isRecord } from '../json.js';
import { GEMINI_SIGNATURE_PREFIX } from './thought-signature.js';

/**
 * Clients of every protocol send a tool call back with the id they were given, while many drop
 * the thinking blocks or reasoning items around it (a Responses client gets `encrypted_content`
 * only with `include`). So the Gemini thought signature of a call also rides in the call's id,
 * after a gateway-private separator, and comes back with it on the next turn.
 *
 * The carried form keeps to the characters every client's and upstream's id rule allows
 * (Anthropic's `^[a-zA-Z0-9_-]+$`): Gemini's standard base64 is written as base64url, without
 * padding, which converts back exactly. Ids grow by the signature (no client we know of bounds
 * them); the upstreams that do (OpenAI: 40 characters in Chat, 64 in Responses) never see the
 * carried form, as every path strips it: the decoders, and the passthrough bodies of each
 * protocol (`unsignedId`).
 */
const SEPARATOR = '__infergate_sig_';
/** The earlier Chat form, `id__infergate-gemini:<base64>`, still read from conversations that hold it. */
const LEGACY_SEPARATOR = `__${GEMINI_SIGNATURE_PREFIX}`;
const PADDED_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The id a tool call goes to the client with. A signature that is not padded standard base64
 * (Gemini's never is otherwise) stays out of the id; a thinking block or reasoning item still
 * carries it.
 */
export function idWithSignature(id: string, signature: string | undefined): string {
  if (signature === undefined || signature === '' || signature.length % 4 !== 0 || !PADDED_BASE64.test(signature)) return id;
  return id + SEPARATOR + signature.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_');
}

/** A tool call id as the client sent it back → the call's own id and the signature it carried. */
export function splitSignedId(value: string): { id: string; signature?: string } {
  const at = value.indexOf(SEPARATOR);
  if (at > 0) {
    const carried = value.slice(at + SEPARATOR.length);
    if (BASE64URL.test(carried)) {
      const base64 = carried.replaceAll('-', '+').replaceAll('_', '/');
      return { id: value.slice(0, at), signature: base64.padEnd(Math.ceil(base64.length / 4) * 4, '=') };
    }
  }
  const legacy = value.indexOf(LEGACY_SEPARATOR);
  if (legacy > 0) return { id: value.slice(0, legacy), signature: value.slice(legacy + LEGACY_SEPARATOR.length) };
  return { id: value };
}

/** The id an upstream gets: the call's own, without a signature the gateway put in it. */
export function unsignedId(value: string): string {
  return value.includes(SEPARATOR) || value.includes(LEGACY_SEPARATOR) ? splitSignedId(value).id : value;
}

/** An answer's parts with each signed tool call's id carrying the signature of the reasoning part before it. */
export function withSignedCallIds(content: IRAssistantPart[]): IRAssistantPart[] {
  return content.map((part, i) => {
    const before = content[i - 1];
    if (part.type !== 'tool_call' || before?.type !== 'reasoning' || before.thoughtSignature === undefined) return part;
    return { ...part, id: idWithSignature(part.id, before.thoughtSignature) };
  });
}

/**
 * The same for a stream: a `reasoning_end` with a signature signs the tool call that starts
 * next; content of any other kind in between ends it (usage events do not).
 */
export class StreamCallSigner {
  private signature: string | undefined;

  /** The event as the client's encoder should see it: a signed call's `tool_call_start` with the carrying id. */
  sign(event: IRStreamEvent): IRStreamEvent {
    switch (event.type) {
      case 'start':
      case 'usage':
        return event;
      case 'reasoning_end':
        this.signature = event.thoughtSignature;
        return event;
      case 'tool_call_start': {
        const signature = this.signature;
        this.signature = undefined;
        return signature === undefined ? event : { ...event, id: idWithSignature(event.id, signature) };
      }
      default:
        this.signature = undefined;
        return event;
    }
  }
}

/**
 * Adds a tool call the client sent back to its assistant turn, with the call's own id. A signature
 * its id carried goes before it as a reasoning part (`ir.ts`), unless the part just before is
 * reasoning that already carries one (a thinking block or reasoning item the client kept): that
 * one wins.
 */
export function pushSignedCall(parts: IRAssistantPart[], call: IRToolCall): void {
  const { id, signature } = splitSignedId(call.id);
  const before = parts.at(-1);
  if (signature !== undefined && !(before?.type === 'reasoning' && before.thoughtSignature !== undefined)) {
    parts.push({ type: 'reasoning', text: '', thoughtSignature: signature });
  }
  parts.push(id === call.id ? call : { ...call, id });
}

/** True for an id that carries a signature the gateway put in it. */
export function isSignedId(value: unknown): value is string {
  return typeof value === 'string' && unsignedId(value) !== value;
}

/** `record` with its id field `key` unsigned, or `record` itself when that id carries nothing. */
export function withUnsignedField<T>(record: T, key: string): T {
  if (!isRecord(record) || !isSignedId(record[key])) return record;
  return { ...record, [key]: unsignedId(record[key]) };
}

/**
 * `list` with `unsign` applied to each element (which returns the element itself when it carries
 * no signature), or `list` itself when nothing changed: passthrough bodies are rebuilt only when
 * they must be.
 */
export function withUnsigned<T>(list: T[], unsign: (item: T) => T): T[] {
  let out: T[] | undefined;
  list.forEach((item, i) => {
    const next = unsign(item);
    if (next === item) return;
    out ??= list.slice();
    out[i] = next;
  });
  return out ?? list;
}
