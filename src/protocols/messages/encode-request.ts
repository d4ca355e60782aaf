import { createHash } from 'node:crypto';
import { type GatewayError, invalidRequest } from '../../errors.js';
import { alternatingTurns, type Turn as WireTurn } from '../alternating-turns.js';
import type { CacheControl, IRAssistantPart, IRContentPart, IRFilePart, IRImagePart, IRRequest, IRTextPart, IRToolChoice } from '../ir.js';
import type { Json } from '../../json.js';
import type { UpstreamEncodeOptions } from '../codec.js';
import { toolInput } from './tool-input.js';
import { admitParams, dropHint } from '../upstream-params.js';

type Block = Json & { type: string };
type Turn = WireTurn<Block>;

/** Thinking budgets for an effort without an explicit budget (Anthropic's minimum is 1024). */
const EFFORT_BUDGETS: Record<string, number> = { minimal: 1024, low: 1024, medium: 4096, high: 16384, xhigh: 32768, max: 32768 };
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * IR → Anthropic Messages request body (reference §8.3).
 *
 * Request fields Claude lacks (OpenAI's `seed` and penalties, `temperature` and `top_k` with
 * thinking on, JSON object mode…) are dropped or refused by `admitParams`, once the encoder knows
 * whether thinking is on.
 */
export function encodeMessagesRequest(request: IRRequest, options: UpstreamEncodeOptions = {}): Json {
  let ir = request;
  const n = ir.passthrough.n;
  if (typeof n === 'number' && n > 1) throw invalidRequest('Several choices (n > 1) are not supported by this model.', 'n');

  const systemParts = [...ir.system];
  const turns: Turn[] = [];
  for (const message of ir.messages) {
    switch (message.role) {
      case 'system':
        // System messages anywhere join the top-level system prompt. Anthropic's own API now
        // takes `role: "system"` in `messages`, but servers that mimic it (and older API
        // versions) answer 400, while a top-level system prompt works everywhere; the message
        // loses only its position in the conversation.
        systemParts.push(...message.content);
        break;
      case 'user':
        turns.push({ role: 'user', content: message.content.flatMap(contentBlock) });
        break;
      case 'assistant':
        turns.push({ role: 'assistant', content: message.content.flatMap(assistantBlock) });
        break;
      case 'tool': {
        const content = message.content.flatMap(contentBlock);
        turns.push({
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: anthropicToolId(message.toolCallId),
              ...(content.length > 0 ? { content } : {}),
              ...(message.isError ? { is_error: true } : {}),
            },
          ],
        });
        break;
      }
    }
  }

  const body: Json = { model: ir.model };
  const system = encodeSystem(systemParts);
  if (system !== undefined) body.system = system;
  body.messages = mergeTurns(turns);

  let maxTokens = ir.maxOutputTokens ?? options.defaultMaxTokens ?? 4096;
  const budget = continuesToolTurnWithoutThinking(body.messages as Json[]) || dropsThinkingForForcedTool(ir) ? undefined : thinkingBudget(ir.reasoning);
  if (budget !== undefined) {
    // `budget_tokens` must stay below `max_tokens`; the visible answer keeps its own allowance.
    if (maxTokens <= budget) maxTokens += budget;
    body.thinking = { type: 'enabled', budget_tokens: budget };
  }
  body.max_tokens = maxTokens;

  ir = admitParams(ir, 'messages', { thinking: budget !== undefined });
  if (ir.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, ir.temperature));
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.topK !== undefined) body.top_k = ir.topK;
  const stop = ir.stop?.filter((sequence) => sequence.trim() !== '');
  if (stop && stop.length > 0) body.stop_sequences = stop;

  if (ir.tools && ir.tools.length > 0) {
    body.tools = ir.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters ?? { type: 'object', properties: {} },
      ...(tool.strict === true ? { strict: true } : {}),
      cache_control: tool.cacheControl,
    }));
    const choice = encodeToolChoice(ir.toolChoice, ir.parallelToolCalls);
    if (choice) body.tool_choice = choice;
  }

  if (ir.responseFormat?.type === 'json_schema') {
    body.output_config = { format: { type: 'json_schema', schema: ir.responseFormat.schema ?? { type: 'object' } } };
  }

  const userId = ir.user ?? (typeof ir.metadata?.user_id === 'string' ? ir.metadata.user_id : undefined);
  if (userId !== undefined) body.metadata = { user_id: userId };
  body.stream = ir.stream;
  keepLastCacheBreakpoints(body, MAX_CACHE_BREAKPOINTS);
  return body;
}

/** Anthropic answers 400 to a request with more `cache_control` blocks than this. */
const MAX_CACHE_BREAKPOINTS = 4;

/**
 * Clients of other protocols may mark any number of parts (OpenAI-compatible gateways accept
 * that). The last breakpoints in prompt order (tools, system, messages) are kept: the last one
 * caches the longest prefix, and the ones before it are its fallbacks.
 */
function keepLastCacheBreakpoints(body: Json, max: number): void {
  const marked: Json[] = [];
  const visit = (blocks: unknown): void => {
    if (!Array.isArray(blocks)) return;
    for (const block of blocks as Json[]) {
      if (block.cache_control !== undefined) marked.push(block);
      if (block.type === 'tool_result') visit(block.content);
    }
  };
  visit(body.tools);
  visit(body.system);
  for (const message of body.messages as Json[]) visit(message.content);
  // Blocks are built by this encoder, so removing the key here changes no client object.
  for (const block of marked.slice(0, Math.max(0, marked.length - max))) delete block.cache_control;
}

/**
 * A tool call id Anthropic accepts (`^[a-zA-Z0-9_-]+$`). Valid ids are kept; others get their bad
 * characters replaced plus a hash of the original, so the mapping is the same on every turn (the
 * call and its result match) and two ids never collide.
 */
export function anthropicToolId(id: string): string {
  if (/^[a-zA-Z0-9_-]+$/.test(id)) return id;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 12);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}_${hash}`;
}

function encodeSystem(parts: IRTextPart[]): string | Block[] | undefined {
  const texts = parts.filter((part) => part.text !== '');
  if (texts.length === 0) return undefined;
  // Blocks only when a cache breakpoint must be kept; a string otherwise.
  if (texts.some((part) => part.cacheControl)) return texts.map((part) => textBlock(part.text, part.cacheControl));
  return texts.map((part) => part.text).join('\n\n');
}

/**
 * Strict alternation: drop empty turns, merge neighbours of the same role. In a user turn the
 * `tool_result` blocks go first, as Anthropic requires.
 */
/**
 * With thinking on, Anthropic requires an assistant turn that tool results continue to start with
 * its signed thinking. A client that could not keep Claude's thinking (Chat Completions has no
 * place for it) replays that turn without it; a signature cannot be forged, so such a request
 * goes without thinking rather than failing with a 400.
 */
function continuesToolTurnWithoutThinking(messages: Json[]): boolean {
  const last = messages.at(-1);
  const previous = messages.at(-2);
  if (last?.role !== 'user' || previous?.role !== 'assistant') return false;
  const results = last.content as Json[];
  if (!results.some((block) => block.type === 'tool_result')) return false;
  const first = (previous.content as Json[])[0];
  return first?.type !== 'thinking' && first?.type !== 'redacted_thinking';
}

function mergeTurns(turns: Turn[]): Json[] {
  const merged = alternatingTurns(turns, (block) => block.type === 'tool_result');
  // A final assistant turn is a prefill, and Anthropic rejects one that ends in whitespace.
  const last = merged.at(-1);
  if (last?.role === 'assistant') {
    const block = last.content.at(-1);
    if (block?.type === 'text' && typeof block.text === 'string') {
      block.text = block.text.trimEnd();
      if (block.text === '') last.content.pop();
      if (last.content.length === 0) merged.pop();
    }
  }
  return merged.map((turn) => ({ role: turn.role, content: turn.content }));
}

function contentBlock(part: IRContentPart): Block[] {
  switch (part.type) {
    case 'text':
      // Anthropic rejects empty text blocks.
      return part.text === '' ? [] : [textBlock(part.text, part.cacheControl)];
    case 'image':
      return [withCache({ type: 'image', source: imageSource(part) }, part.cacheControl)];
    case 'file':
      return [withCache(documentBlock(part), part.cacheControl)];
  }
}

function assistantBlock(part: IRAssistantPart): Block[] {
  switch (part.type) {
    case 'text':
      return part.text === '' ? [] : [textBlock(part.text, part.cacheControl)];
    case 'refusal':
      return part.refusal === '' ? [] : [{ type: 'text', text: part.refusal }];
    case 'tool_call':
      return [withCache({ type: 'tool_use', id: anthropicToolId(part.id), name: part.name, input: toolInput(part.arguments) }, part.cacheControl)];
    case 'reasoning': {
      // Claude only takes back its own thinking, signed or redacted. OpenAI's encrypted reasoning
      // and unsigned text (from a Chat upstream) are dropped: a forged block would be a 400.
      const blocks: Block[] = [];
      if (part.signature) blocks.push({ type: 'thinking', thinking: part.text, signature: part.signature });
      if (part.redacted !== undefined) blocks.push({ type: 'redacted_thinking', data: part.redacted });
      return blocks;
    }
  }
}

function imageSource(part: IRImagePart): Json {
  let data = part.data;
  let mediaType = part.mediaType;
  if (data === undefined && part.url !== undefined) {
    if (/^https?:\/\//i.test(part.url)) return { type: 'url', url: part.url };
    const parsed = parseDataUrl(part.url);
    if (!parsed) throw badInput('An image URL must be an http(s) URL or a base64 data URL.', part.param);
    ({ data, mediaType } = parsed);
  }
  if (data === undefined) throw badInput('An image part has neither a URL nor data.');
  // Anthropic checks the bytes against `media_type`; OpenAI does not, so clients get it wrong.
  mediaType = sniffImageType(data) ?? mediaType;
  if (!mediaType || !IMAGE_TYPES.has(mediaType)) {
    throw badInput(`Image type ${mediaType ?? '(unknown)'} is not supported by this model; use JPEG, PNG, GIF or WebP.`);
  }
  return { type: 'base64', media_type: mediaType, data };
}

function documentBlock(part: IRFilePart): Block {
  const title = part.filename !== undefined ? { title: part.filename } : {};
  let data = part.data;
  let mediaType = part.mediaType;
  if (data === undefined && part.url !== undefined) {
    if (/^https?:\/\//i.test(part.url)) return { type: 'document', source: { type: 'url', url: part.url }, ...title };
    const parsed = parseDataUrl(part.url);
    if (parsed) ({ data, mediaType } = parsed);
  }
  if (data === undefined) {
    // An OpenAI file id means nothing to Anthropic.
    throw badInput('Files must be sent inline (base64 data) or by URL for this model; file ids are not supported.', part.param);
  }
  if (!mediaType && part.filename?.toLowerCase().endsWith('.pdf')) mediaType = 'application/pdf';
  if (mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data }, ...title };
  if (mediaType === 'text/plain') {
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(data, 'base64').toString('utf8') }, ...title };
  }
  throw badInput(`File type ${mediaType ?? '(unknown)'} is not supported by this model; use PDF or plain text.`);
}

function encodeToolChoice(choice: IRToolChoice | undefined, parallelToolCalls: boolean | undefined): Json | undefined {
  if (choice?.type === 'none') return { type: 'none' };
  const parallel = parallelToolCalls ?? choice?.parallel;
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (!choice) return parallel === false ? { type: 'auto', ...disable } : undefined;
  if (choice.type === 'tool') return { type: 'tool', name: choice.name, ...disable };
  return { type: choice.type === 'required' ? 'any' : 'auto', ...disable };
}

/**
 * Claude refuses to think while a tool is forced (`tool_choice` any or tool). The forced tool
 * changes what the answer is, thinking only how it is reached: thinking goes, named as a dropped
 * hint (a 400 under `strictParams`). The Converse encoder's too.
 */
export function dropsThinkingForForcedTool(ir: IRRequest): boolean {
  const forced = (ir.toolChoice?.type === 'required' || ir.toolChoice?.type === 'tool') && (ir.tools?.length ?? 0) > 0;
  if (!forced || thinkingBudget(ir.reasoning) === undefined) return false;
  dropHint(ir, 'reasoning', 'Claude does not think while a tool is forced');
  return true;
}

/** Claude's thinking budget for the request's reasoning settings; undefined for none (the Converse encoder's too). */
export function thinkingBudget(reasoning: IRRequest['reasoning']): number | undefined {
  if (!reasoning) return undefined;
  if (reasoning.budgetTokens !== undefined) return reasoning.budgetTokens > 0 ? Math.max(1024, reasoning.budgetTokens) : undefined;
  if (reasoning.effort === undefined || reasoning.effort === 'none') return undefined;
  return EFFORT_BUDGETS[reasoning.effort] ?? EFFORT_BUDGETS.medium;
}

function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  // The regex reads the header only: run over megabytes of base64 it blocked the event loop.
  const comma = /^data:/i.test(url) ? url.indexOf(',') : -1;
  const match = comma === -1 ? null : /^data:([^;,]+)(?:;[^,]*)?;base64$/i.exec(url.slice(0, comma));
  return match ? { mediaType: match[1]!.toLowerCase(), data: url.slice(comma + 1) } : undefined;
}

/** The image type from the first base64 characters (magic bytes), when recognisable (the Converse encoder's too). */
export function sniffImageType(data: string): string | undefined {
  if (data.startsWith('/9j/')) return 'image/jpeg';
  if (data.startsWith('iVBORw0KGgo')) return 'image/png';
  if (data.startsWith('R0lGOD')) return 'image/gif';
  if (data.startsWith('UklGR') && Buffer.from(data.slice(0, 16), 'base64').toString('latin1', 8, 12) === 'WEBP') return 'image/webp';
  return undefined;
}

function textBlock(text: string, cacheControl: CacheControl | undefined): Block {
  return withCache({ type: 'text', text }, cacheControl);
}

function withCache(block: Block, cacheControl: CacheControl | undefined): Block {
  return cacheControl ? { ...block, cache_control: cacheControl } : block;
}

/** `param` where the decoder recorded the client's field (a URL or file id), none otherwise. */
function badInput(message: string, param?: string): GatewayError {
  return invalidRequest(message, param ?? null);
}
