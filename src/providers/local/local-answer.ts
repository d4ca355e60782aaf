import { createHash } from 'node:crypto';
import type { IRContentPart, IRMessage, IRRequest, IRTool } from '../../protocols/ir.js';
import { toolArguments, truncate, valueFromSchema } from './tool-arguments.js';

/**
 * What the local model answers, decided from the request alone so that the same request always
 * gets the same answer:
 * 1. the conversation ends with tool results → a sentence reporting them;
 * 2. tools are offered and the prompt asks for one (names it, says "use a tool", or `toolChoice`
 *    forces it; `none` forbids it) → a call of that tool, arguments built from its schema;
 * 3. otherwise → a sentence about the prompt (JSON when a response format asks for it).
 */
export type LocalReply = { kind: 'text'; text: string } | { kind: 'tool_call'; id: string; name: string; arguments: string };

export function planReply(request: IRRequest): LocalReply {
  const results = resultsSinceLastAnswer(request.messages);
  const userText = lastUserText(request.messages);
  if (results.length > 0) {
    return { kind: 'text', text: formatted(request, results.map((result) => reportToolResult(result, request.messages)).join(' '), userText) };
  }
  const tool = chooseTool(request, withoutContextNotes(userText));
  if (tool) {
    return {
      kind: 'tool_call',
      id: callId(tool.name, userText, request.messages.length),
      name: tool.name,
      arguments: toolArguments(tool.parameters, withoutContextNotes(userText), tool.schemaField ?? 'tools'),
    };
  }
  return { kind: 'text', text: formatted(request, describePrompt(request.messages), userText) };
}

/** The short thought the reasoner shows before its answer. */
export function reasoningFor(reply: LocalReply, request: IRRequest): string {
  if (reply.kind === 'tool_call') return `The request asks for the ${reply.name} tool, so I will call it with arguments taken from the prompt.`;
  if (resultsSinceLastAnswer(request.messages).length > 0) return 'The tool has answered; I will report what it returned.';
  const words = lastUserText(request.messages).split(/\s+/).filter(Boolean).length;
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
 * The user's own words: without the `<system-reminder>` notes Claude Code puts into the user turn
 * (its environment, tool and skill lists), which name tools the user never asked for.
 */
function withoutContextNotes(text: string): string {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, ' ').trim();
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
  if (choice.type === 'required' || asksForATool(userText)) return tools[0];
  return undefined;
}

/** Words in tool names that say nothing about the tool, so a prompt using them asks for none. */
const GENERIC_WORDS = new Set([
  'get',
  'set',
  'list',
  'fetch',
  'create',
  'update',
  'delete',
  'make',
  'run',
  'call',
  'tool',
  'function',
  'current',
  'info',
  'data',
  'api',
  'the',
  'for',
  'and',
]);

/**
 * The tool the prompt names: its full name first ("get_weather", "get weather"), then a telling
 * word ("weather"). Words inside paths ("/tmp/agent-1/notes.txt") name no tool.
 */
function mentionedTool(tools: readonly IRTool[], userText: string): IRTool | undefined {
  const prompt = userText
    .replace(/\S*\/\S*/g, ' ')
    .toLowerCase()
    .replace(/[_-]+/g, ' ');
  const named = tools.find((tool) => containsWords(prompt, nameWords(tool.name).join(' ')));
  if (named) return named;
  return tools.find((tool) => nameWords(tool.name).some((word) => word.length >= 3 && !GENERIC_WORDS.has(word) && containsWords(prompt, word)));
}

function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function containsWords(text: string, words: string): boolean {
  if (!words) return false;
  const escaped = words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\\b${escaped}(?:s|es)?\\b`).test(text);
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
