import { newId } from '../../ids.js';
import type { EncodeContext } from '../codec.js';
import type { IRFinishReason, IRUsage } from '../ir.js';
import { toResponsesUsage } from './usage.js';
import { CUSTOM_INPUT, type ClientTool } from './client-tools.js';
import { isRecord, parseObject, type Json } from '../../json.js';

/**
 * The Response object and its output items, built one way for the JSON body and for every
 * lifecycle event of a stream (whose `response` replaces the SDK's snapshot wholesale).
 */

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponseInit {
  id: string;
  createdAt: number;
  status: ResponseStatus;
  output: Json[];
  /** `null` until the response is finished. */
  usage: IRUsage | null;
  finishReason?: IRFinishReason;
  error?: { code: string; message: string } | null;
}

/** Length and content-filter finishes make the response `incomplete`; everything else completes. */
export function incompleteReason(reason: IRFinishReason | undefined): 'max_output_tokens' | 'content_filter' | undefined {
  if (reason === 'length') return 'max_output_tokens';
  if (reason === 'content_filter') return 'content_filter';
  return undefined;
}

export function finishedStatus(reason: IRFinishReason): 'completed' | 'incomplete' {
  return incompleteReason(reason) ? 'incomplete' : 'completed';
}

export function buildResponse(init: ResponseInit, ctx: EncodeContext): Json {
  const incomplete = init.status === 'incomplete' ? incompleteReason(init.finishReason) : undefined;
  return {
    id: init.id,
    object: 'response',
    created_at: init.createdAt,
    status: init.status,
    completed_at: init.status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    background: false,
    error: init.error ?? null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    model: ctx.model,
    output: init.output,
    usage: init.usage ? toResponsesUsage(init.usage) : null,
    ...echoedConfig(ctx.request),
  };
}

/**
 * The request configuration a Response echoes. The SDK types mark several of these required
 * (nullable), so each gets the API's default when the client did not set it.
 */
function echoedConfig(request: Json): Json {
  const text = isRecord(request.text) ? request.text : {};
  const reasoning = isRecord(request.reasoning) ? request.reasoning : {};
  return {
    instructions: typeof request.instructions === 'string' ? request.instructions : null,
    max_output_tokens: typeof request.max_output_tokens === 'number' ? request.max_output_tokens : null,
    max_tool_calls: typeof request.max_tool_calls === 'number' ? request.max_tool_calls : null,
    metadata: isRecord(request.metadata) ? request.metadata : {},
    parallel_tool_calls: typeof request.parallel_tool_calls === 'boolean' ? request.parallel_tool_calls : true,
    previous_response_id: null,
    prompt_cache_key: typeof request.prompt_cache_key === 'string' ? request.prompt_cache_key : null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? reasoning.generate_summary ?? null },
    safety_identifier: typeof request.safety_identifier === 'string' ? request.safety_identifier : null,
    service_tier: typeof request.service_tier === 'string' && request.service_tier !== 'auto' ? request.service_tier : 'default',
    store: typeof request.store === 'boolean' ? request.store : true,
    temperature: typeof request.temperature === 'number' ? request.temperature : 1,
    text: { format: isRecord(text.format) ? text.format : { type: 'text' }, verbosity: text.verbosity ?? 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_logprobs: typeof request.top_logprobs === 'number' ? request.top_logprobs : 0,
    top_p: typeof request.top_p === 'number' ? request.top_p : 1,
    truncation: request.truncation === 'auto' ? 'auto' : 'disabled',
    user: typeof request.user === 'string' ? request.user : undefined,
  };
}

// ---- output items -------------------------------------------------------------------------

export function outputTextPart(text: string): Json {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function refusalPart(refusal: string): Json {
  return { type: 'refusal', refusal };
}

export function messageItem(id: string, content: Json[], status: ItemStatus): Json {
  return { id, type: 'message', status, role: 'assistant', content };
}

export function reasoningItem(id: string, text: string, encryptedContent: string | undefined): Json {
  return {
    id,
    type: 'reasoning',
    summary: text === '' ? [] : [{ type: 'summary_text', text }],
    encrypted_content: encryptedContent,
  };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: ItemStatus, namespace?: string): Json {
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name, namespace };
}

/** The item id prefix of a call to a tool of this kind, as the API mints them. */
export function callItemId(tool: ClientTool | undefined): string {
  switch (tool?.kind) {
    case 'custom':
      return newId('ctc_');
    case 'tool_search':
      return newId('tsc_');
    case 'local_shell':
      return newId('lsh_');
    default:
      return newId('fc_');
  }
}

/**
 * A call of the flat function `name` as the item the client's tool kind expects; `args` is the
 * function's JSON arguments (partial while `in_progress`, then shown empty).
 */
export function callItem(tool: ClientTool | undefined, name: string, id: string, callId: string, args: string, status: ItemStatus): Json {
  const done = status !== 'in_progress';
  switch (tool?.kind) {
    case 'custom':
      return {
        id,
        type: 'custom_tool_call',
        status,
        call_id: callId,
        name: tool.name,
        input: done ? customInput(args) : '',
        namespace: tool.namespace,
      };
    case 'tool_search':
      return { id, type: 'tool_search_call', status, call_id: callId, execution: 'client', arguments: done ? argumentsObject(args) : {} };
    case 'local_shell':
      return { id, type: 'local_shell_call', status, call_id: callId, action: localShellAction(done ? argumentsObject(args) : {}) };
    case 'function':
      return functionCallItem(id, callId, tool.name, done ? args : '', status, tool.namespace);
    default:
      // A name the request offered no tool for: shown as the model wrote it.
      return functionCallItem(id, callId, name, done ? args : '', status);
  }
}

/** The raw text of a custom tool call: the `input` argument, or the text itself if it is not JSON. */
export function customInput(args: string): string {
  // Not a JSON object with an `input`: the model wrote the raw text without wrapping it.
  const input = parseObject(args)?.[CUSTOM_INPUT];
  return typeof input === 'string' ? input : args;
}

function argumentsObject(args: string): Json {
  return parseObject(args) ?? {};
}

function localShellAction(args: Json): Json {
  const command = Array.isArray(args.command) ? args.command.map(String) : typeof args.command === 'string' ? ['bash', '-lc', args.command] : [];
  return {
    type: 'exec',
    command,
    timeout_ms: typeof args.timeout_ms === 'number' ? args.timeout_ms : null,
    working_directory: typeof args.workdir === 'string' ? args.workdir : null,
    env: null,
    user: null,
  };
}
