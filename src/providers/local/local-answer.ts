import { createHash } from 'node:crypto';
import type { IRContentPart, IRMessage, IRRequest, IRTool } from '../../protocols/ir.js';
import { pathIn, toolArguments, truncate, valueFromSchema } from './tool-arguments.js';
import { fileReadingTool, mentionedTool } from './tool-mention.js';
import { statedWorkingDirectory } from './working-directory.js';

/**
 * The user's words the model reads to choose a tool and fill its arguments: the first and the
 * last half of this many characters. A prompt can be as long as the body limit (32 MiB); the
 * answer only ever depends on a few words of it.
 */
export const READ_PROMPT_CHARS = 128 * 1024;

/**
 * What the local model answers, decided from the request alone so that the same request always
 * gets the same answer:
 * 1. the conversation ends with tool results → a sentence reporting them;
 * 2. tools are offered and the prompt asks for one (names it, says "use a tool", asks to read a
 *    file it names, or `toolChoice` forces it; `none` forbids it) → a call of that tool, arguments
 *    built from its schema, a relative path resolved against the directory the agent works in;
 * 3. otherwise → a sentence about the prompt (JSON when a response format asks for it).
 */
export type LocalReply = { kind: 'text'; text: string } | { kind: 'tool_call'; id: string; name: string; arguments: string };

export function planReply(request: IRRequest): LocalReply {
  const results = resultsSinceLastAnswer(request.messages);
  const userText = lastUserText(request.messages);
  if (results.length > 0) {
    return { kind: 'text', text: formatted(request, results.map((result) => reportToolResult(result, request.messages)).join(' '), userText) };
  }
  const userWords = readWindow(withoutContextNotes(userText));
  const tool = chooseTool(request, userWords);
  if (tool) {
    return {
      kind: 'tool_call',
      id: callId(tool.name, userText, request.messages.length),
      name: tool.name,
      arguments: toolArguments(tool.parameters, userWords, tool.schemaField ?? 'tools', statedWorkingDirectory(request)),
    };
  }
  return { kind: 'text', text: formatted(request, describePrompt(request.messages), userText) };
}

/** The short thought the reasoner shows before its answer. */
export function reasoningFor(reply: LocalReply, request: IRRequest): string {
  if (reply.kind === 'tool_call') return `The request asks for the ${reply.name} tool, so I will call it with arguments taken from the prompt.`;
  if (resultsSinceLastAnswer(request.messages).length > 0) return 'The tool has answered; I will report what it returned.';
  const words = wordCount(lastUserText(request.messages));
  return `The user wrote ${words} word${words === 1 ? '' : 's'}. I will repeat ${words === 1 ? 'it' : 'them'} back and say what I am.`;
}

/** Characters of everything the model reads, for the usage estimate (an image or file counts 340: 85 tokens). */
export function promptChars(request: IRRequest): number {
  let chars = 0;
  for (const part of request.system) chars += part.text.length;
  for (const message of request.messages) {
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') chars += part.text.length;
      else if (part.type === 'tool_call') chars += part.name.length + part.arguments.length;
      else if (part.type === 'refusal') chars += part.refusal.length;
      else chars += 340;
    }
  }
  for (const tool of request.tools ?? []) {
    chars += tool.name.length + (tool.description?.length ?? 0) + (tool.parameters ? JSON.stringify(tool.parameters).length : 0);
  }
  return chars;
}

type ToolMessage = Extract<IRMessage, { role: 'tool' }>;

/**
 * The tool results that came in since the model last spoke. A client may add its own notes after
 * them (Claude Code appends reminders to the turn carrying the results); the model still owes
 * an answer to the results rather than a new call.
 */
function resultsSinceLastAnswer(messages: readonly IRMessage[]): ToolMessage[] {
  const results: ToolMessage[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'assistant') break;
    if (message.role === 'tool') results.unshift(message);
  }
  return results;
}

/**
 * The tags of the notes agents put into the user turn: Claude Code's `<system-reminder>` (its
 * environment, tool and skill lists), Gemini CLI's `<session_context>` (its directory tree),
 * Codex's `<environment_context>`. They name tools and files the user never asked for.
 */
const NOTE_OPEN = /<(system-reminder|session_context|environment_context)>/g;

/**
 * The user's own words: without the agents' context notes. One pass with `indexOf` for each
 * note's close: a note that is never closed stays, and so does everything after it (a lazy
 * regex scanned to the end of the text from every unclosed note: quadratic).
 */
export function withoutContextNotes(text: string): string {
  const kept: string[] = [];
  let from = 0;
  const open = new RegExp(NOTE_OPEN);
  for (;;) {
    open.lastIndex = from;
    const note = open.exec(text);
    const closeTag = note ? `</${note[1]}>` : '';
    const close = note ? text.indexOf(closeTag, open.lastIndex) : -1;
    if (close < 0) break;
    kept.push(text.slice(from, note!.index));
    from = close + closeTag.length;
  }
  kept.push(text.slice(from));
  return kept.join(' ').trim();
}

/** `text`, or its first and last `READ_PROMPT_CHARS / 2` characters when it is longer. */
function readWindow(text: string): string {
  if (text.length <= READ_PROMPT_CHARS) return text;
  const half = READ_PROMPT_CHARS / 2;
  return `${text.slice(0, half)} ${text.slice(-half)}`;
}

/** Runs of non-space characters, counted without splitting the text into an array. */
function wordCount(text: string): number {
  let count = 0;
  let inWord = false;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    // ASCII decided by code; the rest as `\s` decides (no-break and other Unicode spaces).
    const space = code < 128 ? code === 32 || (code >= 9 && code <= 13) : /\s/.test(text[at]!);
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
}

function reportToolResult(result: ToolMessage, messages: readonly IRMessage[]): string {
  const name = result.name ?? toolNameOf(result.toolCallId, messages) ?? 'tool';
  const output = truncate(partsText(result.content) || '(nothing)', 200);
  return result.isError ? `The ${name} tool failed: ${output}.` : `The ${name} tool returned: ${output}.`;
}

function toolNameOf(callId: string, messages: readonly IRMessage[]): string | undefined {
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content) if (part.type === 'tool_call' && part.id === callId) return part.name;
  }
  return undefined;
}

function describePrompt(messages: readonly IRMessage[]): string {
  const last = [...messages].reverse().find((message) => message.role === 'user');
  const text = last ? partsText(last.content, ' ') : '';
  const attachments = last ? last.content.filter((part) => part.type !== 'text').length : 0;
  const said = text ? `You said: "${truncate(text.replace(/\s+/g, ' '), 80)}".` : 'You sent no text.';
  const sent = attachments > 0 ? ` You also sent ${attachments} attachment${attachments === 1 ? '' : 's'}.` : '';
  return `${said}${sent} This is infergate's offline local model.`;
}

/** The answer in the requested response format: JSON built from the schema, or `{"answer": …}`. */
function formatted(request: IRRequest, sentence: string, userText: string): string {
  const format = request.responseFormat;
  if (format?.type === 'json_schema' && format.schema !== undefined)
    return JSON.stringify(valueFromSchema(format.schema, userText, format.schemaField ?? 'response_format'));
  if (format?.type === 'json_object' || format?.type === 'json_schema') return JSON.stringify({ answer: sentence });
  return sentence;
}

function chooseTool(request: IRRequest, userText: string): IRTool | undefined {
  const tools = request.tools ?? [];
  const choice = request.toolChoice ?? { type: 'auto' };
  if (tools.length === 0 || choice.type === 'none') return undefined;
  if (choice.type === 'tool') return tools.find((tool) => tool.name === choice.name) ?? { name: choice.name };
  const mentioned = mentionedTool(tools, userText);
  if (mentioned) return mentioned;
  if (asksToReadAFile(userText)) {
    const reader = fileReadingTool(tools);
    if (reader) return reader;
  }
  if (choice.type === 'required' || asksForATool(userText)) return tools[0];
  return undefined;
}

/** "read notes.txt", "show me /etc/hosts": a reading verb and a file. */
function asksToReadAFile(text: string): boolean {
  return /\b(read|open|show|cat|print|view|display)\b/i.test(text) && pathIn(text) !== undefined;
}

function asksForATool(text: string): boolean {
  return /\b(use|using|call|invoke|run)\b/i.test(text) && /\b(tools?|functions?)\b/i.test(text);
}

/** `call_` + 24 hex characters derived from the prompt: the same request gets the same id. */
function callId(name: string, userText: string, messageCount: number): string {
  return (
    'call_' +
    createHash('sha256')
      .update(JSON.stringify([name, userText, messageCount]))
      .digest('hex')
      .slice(0, 24)
  );
}

function lastUserText(messages: readonly IRMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === 'user') return partsText(message.content, ' ');
  }
  return '';
}

function partsText(parts: readonly IRContentPart[], separator = '\n'): string {
  return parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join(separator)
    .trim();
}
