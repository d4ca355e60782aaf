import type { IncomingMessage, ServerResponse } from 'node:http';
import { serve } from '../helpers/serve.js';
import { sseData } from './fake-server.js';

/**
 * A Chat Completions upstream that reads its body the way Go's `encoding/json` does, as Ollama's
 * OpenAI layer (`middleware/openai.go`: gin's `ShouldBindJSON` into `ChatCompletionRequest`) and
 * other Go gateways do: an object key goes to the struct field whose tag it equals, else to one it
 * equals under Go's case folding (`foldName`: each character lower-cased, then upper-cased, by
 * Unicode's one-character mappings, so `ſ` is `S`, the Kelvin sign `K`, `ı` and `İ` are `I`); a
 * later key overwrites an earlier one, and a struct behind a pointer that is already set is
 * decoded into, not replaced. It records what it decoded and answers as the model it decoded,
 * with 1M input and 1M output tokens, usage only when `stream_options.include_usage` decoded true.
 */
export interface FakeGoChat {
  url: string;
  /** What each request decoded to, in order. */
  readonly decoded: GoChatRequest[];
  close(): Promise<void>;
}

/** The fields of Ollama's `openai.ChatCompletionRequest` that matter here. */
export interface GoChatRequest {
  model?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

export const GO_USAGE = { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 };

type GoField = { tag: string; kind: 'string' | 'bool' } | { tag: string; kind: 'struct'; fields: readonly GoField[] };

const CHAT_REQUEST: readonly GoField[] = [
  { tag: 'model', kind: 'string' },
  { tag: 'stream', kind: 'bool' },
  { tag: 'stream_options', kind: 'struct', fields: [{ tag: 'include_usage', kind: 'bool' }] },
];

export async function startFakeGoChat(): Promise<FakeGoChat> {
  const decoded: GoChatRequest[] = [];
  const served = await serve((req, res) => {
    void answer(req, res, decoded).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake upstream bug: ${String(error)}`);
    });
  });
  return { url: served.url, decoded, close: served.close };
}

async function answer(req: IncomingMessage, res: ServerResponse, decoded: GoChatRequest[]): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: '404 page not found' } });
  let request: GoChatRequest;
  try {
    request = goUnmarshal(Buffer.concat(chunks).toString('utf8'), CHAT_REQUEST) as GoChatRequest;
  } catch (error) {
    return json(res, 400, { error: { message: String(error), type: 'invalid_request_error' } });
  }
  decoded.push(request);
  const model = request.model ?? '';
  const base = { id: 'chatcmpl-go', created: 1, model };
  const text = `served by upstream model ${model}`;
  if (request.stream !== true) {
    return json(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: GO_USAGE,
    });
  }
  const withUsage = request.stream_options?.include_usage === true;
  const chunk = (choices: unknown[], usage: unknown = null) => sseData({ ...base, object: 'chat.completion.chunk', choices, ...(withUsage ? { usage } : {}) });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(chunk([{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }]));
  res.write(chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]));
  if (withUsage) res.write(chunk([], GO_USAGE));
  res.end('data: [DONE]\n\n');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

// ---- Go's json.Unmarshal into a struct ------------------------------------------------------

/** A JSON object with its members in order, duplicates kept (what `JSON.parse` cannot give). */
interface Members {
  members: [string, JsonValue][];
}
type JsonValue = Members | JsonValue[] | string | number | boolean | null;

/** `json.Unmarshal(text, &v)` for a struct of `fields`. */
export function goUnmarshal(text: string, fields: readonly GoField[]): Record<string, unknown> {
  const reader = { text, at: 0 };
  const value = readValue(reader);
  skipSpace(reader);
  if (reader.at !== text.length) throw new Error('invalid character after top-level value');
  if (!isMembers(value)) throw new Error('cannot unmarshal non-object into Go value of type struct');
  return decodeInto({}, value, fields);
}

function decodeInto(target: Record<string, unknown>, object: Members, fields: readonly GoField[]): Record<string, unknown> {
  for (const [key, value] of object.members) {
    const field = fields.find((candidate) => candidate.tag === key) ?? fields.find((candidate) => goFold(candidate.tag) === goFold(key));
    if (!field || value === null) {
      if (field?.kind === 'struct') delete target[field.tag];
      continue;
    }
    if (field.kind === 'struct') {
      if (!isMembers(value)) throw new Error(`cannot unmarshal into Go struct field .${key}`);
      // A pointer already set is decoded into: earlier members stay unless overwritten.
      target[field.tag] = decodeInto((target[field.tag] as Record<string, unknown> | undefined) ?? {}, value, field.fields);
    } else if (typeof value === (field.kind === 'bool' ? 'boolean' : 'string')) {
      target[field.tag] = value;
    } else {
      throw new Error(`cannot unmarshal into Go struct field .${key} of type ${field.kind}`);
    }
  }
  return target;
}

/** Go's `foldName`: every character through `unicode.ToUpper(unicode.ToLower(r))`. */
export function goFold(name: string): string {
  return [...name].map((char) => simpleUpper(simpleLower(char))).join('');
}

/** Unicode's one-character lower-case mapping (JavaScript's is the full one: `İ` becomes two characters there). */
function simpleLower(char: string): string {
  if (char === '\u0130') return 'i';
  const lower = char.toLowerCase();
  return [...lower].length === 1 ? lower : char;
}

function simpleUpper(char: string): string {
  const upper = char.toUpperCase();
  return [...upper].length === 1 ? upper : char;
}

const isMembers = (value: JsonValue): value is Members => typeof value === 'object' && value !== null && !Array.isArray(value);

function readValue(reader: { text: string; at: number }): JsonValue {
  skipSpace(reader);
  const char = reader.text[reader.at];
  if (char === '{') {
    reader.at++;
    const members: [string, JsonValue][] = [];
    skipSpace(reader);
    if (reader.text[reader.at] === '}') {
      reader.at++;
      return { members };
    }
    for (;;) {
      skipSpace(reader);
      const key = readValue(reader);
      if (typeof key !== 'string') throw new Error('invalid character looking for beginning of object key string');
      skipSpace(reader);
      if (reader.text[reader.at++] !== ':') throw new Error("invalid character after object key, expected ':'");
      members.push([key, readValue(reader)]);
      skipSpace(reader);
      const next = reader.text[reader.at++];
      if (next === '}') return { members };
      if (next !== ',') throw new Error("invalid character after object key:value pair, expected ',' or '}'");
    }
  }
  if (char === '[') {
    reader.at++;
    const items: JsonValue[] = [];
    skipSpace(reader);
    if (reader.text[reader.at] === ']') {
      reader.at++;
      return items;
    }
    for (;;) {
      items.push(readValue(reader));
      skipSpace(reader);
      const next = reader.text[reader.at++];
      if (next === ']') return items;
      if (next !== ',') throw new Error("invalid character after array element, expected ',' or ']'");
    }
  }
  // A string, number or literal: JSON.parse reads the one token.
  const pattern = char === '"' ? STRING : LITERAL;
  pattern.lastIndex = reader.at;
  const token = pattern.exec(reader.text);
  if (!token) throw new Error(`invalid character at offset ${reader.at}`);
  reader.at += token[0].length;
  return JSON.parse(token[0]) as JsonValue;
}

const STRING = /"(?:[^"\\]|\\.)*"/y;
const LITERAL = /[^,\]}\s]+/y;

function skipSpace(reader: { text: string; at: number }): void {
  while (/\s/.test(reader.text[reader.at] ?? '')) reader.at++;
}
