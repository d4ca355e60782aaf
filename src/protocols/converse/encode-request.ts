import { invalidRequest } from '../../errors.js';
import { isRecord, parseJson, type Json } from '../../json.js';
import type { UpstreamEncodeOptions } from '../codec.js';
import { refuseStorageUris, type StorageUriCheck } from '../storage-uris.js';
import { alternatingTurns, type Turn as WireTurn } from '../alternating-turns.js';
import type { CacheControl, IRAssistantPart, IRContentPart, IRMessage, IRRequest } from '../ir.js';
import { anthropicToolId, dropsThinkingForForcedTool, thinkingBudget } from '../messages/encode-request.js';
import { documentBlock, imageBlock } from './media-blocks.js';
import { encodeToolConfig } from './tool-config.js';
import { bedrockFamily } from './model-family.js';
import { admitParams, clientName } from '../upstream-params.js';

type Block = Json;
type Turn = WireTurn<Block>;

/** What a tool result with no content says (Converse takes no empty result). */
const EMPTY_RESULT = '(no output)';

/**
 * IR → Bedrock Converse request body (the model goes in the path).
 *
 * - System text, wherever it was, joins `system`; tool results are `toolResult` blocks of a user
 *   turn; neighbouring turns of one role are merged (Converse wants them alternating).
 * - A part marked for caching is followed by a `cachePoint` block.
 * - Only signed reasoning goes back, to Claude (`reasoningContent` with its signature, or
 *   redacted content); other vendors' opaque reasoning and unsigned text are dropped.
 * - What Converse has no field for goes in `additionalModelRequestFields`, in the model
 *   vendor's own words: `top_k` and Claude's `thinking` budget; Nova's `topK` and reasoning
 *   effort. Other request fields Converse or the model lacks (`top_k` elsewhere, OpenAI's `seed`
 *   and penalties, JSON object mode…) are dropped or refused by `admitParams`.
 * - A JSON schema response format is `outputConfig.textFormat` (structured output).
 */
export function encodeConverseRequest(request: IRRequest, options: UpstreamEncodeOptions = {}): Json {
  let ir = request;
  const n = ir.passthrough.n;
  if (typeof n === 'number' && n > 1) throw invalidRequest('Several choices (n > 1) are not supported by this model.', 'n');
  const family = bedrockFamily(ir.model);
  const storage = options.storageUris ?? refuseStorageUris;

  // Only Claude signs its reasoning and takes it back; an application profile (family unknown) may be Claude.
  const signsReasoning = family === 'anthropic' || family === undefined;
  const system: Block[] = [];
  const pushSystem = (parts: { text: string; cacheControl?: CacheControl | undefined }[]) => {
    for (const part of parts) if (!blank(part.text)) system.push(...cached({ text: part.text }, part.cacheControl));
  };
  pushSystem(ir.system);

  const turns: Turn[] = [];
  const callNames = new Map<string, string>();
  for (const [index, message] of ir.messages.entries()) {
    switch (message.role) {
      case 'system':
        pushSystem(message.content);
        break;
      case 'user':
        turns.push({ role: 'user', content: message.content.flatMap((part, at) => contentBlocks(part, `messages[${index}].content[${at}]`, storage)) });
        break;
      case 'assistant':
        for (const part of message.content) if (part.type === 'tool_call') callNames.set(anthropicToolId(part.id), part.name);
        turns.push({
          role: 'assistant',
          content: message.content.flatMap((part, at) => assistantBlocks(part, `messages[${index}].content[${at}]`, signsReasoning)),
        });
        break;
      case 'tool':
        turns.push({ role: 'user', content: [toolResult(message, callNames, `messages[${index}]`, storage)] });
        break;
    }
  }
  const messages = alternatingTurns(turns, (block) => Boolean(block.toolResult));
  if (messages.length === 0) throw invalidRequest('The request has no messages to send.', clientName(ir, 'messages'));

  const body: Json = { messages };
  if (system.length > 0) body.system = system;

  const inference: Json = {};
  const additional: Json = {};
  let maxTokens = ir.maxOutputTokens ?? options.defaultMaxTokens;
  const budget =
    family === 'anthropic' && !continuesToolTurnWithoutThinking(messages) && !dropsThinkingForForcedTool(ir) ? thinkingBudget(ir.reasoning) : undefined;
  if (budget !== undefined) {
    // As on Anthropic's API: the budget stays below max_tokens, and the answer keeps its allowance.
    maxTokens = maxTokens === undefined || maxTokens <= budget ? (maxTokens ?? 4096) + budget : maxTokens;
    additional.thinking = { type: 'enabled', budget_tokens: budget };
  }
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  ir = admitParams(ir, 'converse', { thinking: budget !== undefined, family });
  if (ir.temperature !== undefined) inference.temperature = family === 'anthropic' ? Math.min(1, ir.temperature) : ir.temperature;
  if (ir.topP !== undefined) inference.topP = ir.topP;
  const stop = ir.stop?.filter((sequence) => sequence !== '');
  if (stop && stop.length > 0) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;

  // Nova takes it in its own `inferenceConfig`; Claude, Cohere and Mistral as `top_k`.
  if (ir.topK !== undefined) Object.assign(additional, family === 'amazon' ? { inferenceConfig: { topK: ir.topK } } : { top_k: ir.topK });
  if (family === 'amazon' && ir.reasoning?.effort !== undefined && ir.reasoning.effort !== 'none') {
    additional.reasoningConfig = { type: 'enabled', maxReasoningEffort: novaEffort(ir.reasoning.effort) };
  }
  if (family === 'openai' && ir.reasoning?.effort !== undefined) additional.reasoning_effort = ir.reasoning.effort;
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional;

  const toolConfig = encodeToolConfig(ir, callNames);
  if (toolConfig) body.toolConfig = toolConfig;

  const format = ir.responseFormat;
  if (format?.type === 'json_schema') {
    // Converse takes the schema as JSON text.
    const jsonSchema = {
      schema: JSON.stringify(format.schema ?? { type: 'object' }),
      ...(format.name ? { name: format.name } : {}),
      ...(format.description ? { description: format.description } : {}),
    };
    body.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema } } };
  }
  return body;
}

function blank(text: string): boolean {
  return text.trim() === '';
}

function cached(block: Block, cacheControl: CacheControl | undefined): Block[] {
  return cacheControl ? [block, { cachePoint: { type: 'default' } }] : [block];
}

function contentBlocks(part: IRContentPart, param: string, storage: StorageUriCheck): Block[] {
  switch (part.type) {
    case 'text':
      // Converse refuses empty and blank text blocks.
      return blank(part.text) ? [] : cached({ text: part.text }, part.cacheControl);
    case 'image':
      return cached({ image: imageBlock(part, param, storage) }, part.cacheControl);
    case 'file':
      return cached({ document: documentBlock(part, param, storage) }, part.cacheControl);
  }
}

function assistantBlocks(part: IRAssistantPart, param: string, signsReasoning: boolean): Block[] {
  switch (part.type) {
    case 'text':
      return blank(part.text) ? [] : cached({ text: part.text }, part.cacheControl);
    case 'refusal':
      return blank(part.refusal) ? [] : [{ text: part.refusal }];
    case 'tool_call':
      return cached(
        { toolUse: { toolUseId: anthropicToolId(part.id), name: part.name, input: callInput(part.arguments, part.param ?? `${param}.arguments`) } },
        part.cacheControl,
      );
    case 'reasoning':
      // Bedrock takes back only what it signed (a forged block would be a 400), and only Claude signs.
      if (!signsReasoning) return [];
      if (part.redacted !== undefined) return [{ reasoningContent: { redactedContent: part.redacted } }];
      if (part.signature) return [{ reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } }];
      return [];
  }
}

function callInput(text: string, param: string): Json {
  if (text.trim() === '') return {};
  const parsed = parseJson(text);
  if (!isRecord(parsed)) throw invalidRequest(`Tool call arguments ('${param}') must be a JSON object for this model.`, param);
  return parsed;
}

/** A tool result as a `toolResult` block: its text (JSON as `json`), images and documents. */
function toolResult(message: Extract<IRMessage, { role: 'tool' }>, callNames: Map<string, string>, param: string, storage: StorageUriCheck): Block {
  const id = anthropicToolId(message.toolCallId);
  if (!callNames.has(id)) {
    const at = message.param ?? `${param}.tool_call_id`;
    throw invalidRequest(`Tool result '${message.toolCallId}' ('${at}') answers no tool call of an earlier assistant turn.`, at);
  }
  const content: Json[] = [];
  for (const [at, part] of message.content.entries()) {
    if (part.type === 'text') {
      if (!blank(part.text)) content.push({ text: part.text });
    } else if (part.type === 'image') content.push({ image: imageBlock(part, `${param}.content[${at}]`, storage) });
    else content.push({ document: documentBlock(part, `${param}.content[${at}]`, storage) });
  }
  // An empty result is still an answer, and Converse refuses empty and blank text: it is said in words.
  if (content.length === 0) content.push({ text: EMPTY_RESULT });
  return { toolResult: { toolUseId: id, content, ...(message.isError ? { status: 'error' } : {}) } };
}

/**
 * With thinking on, Claude wants an assistant turn that tool results continue to start with its
 * signed reasoning. A client that could not keep it (Chat has no place for it) replays the turn
 * without; a signature cannot be forged, so such a request goes without thinking instead of
 * failing (as the Messages encoder does).
 */
function continuesToolTurnWithoutThinking(messages: readonly Turn[]): boolean {
  const last = messages.at(-1);
  const previous = messages.at(-2);
  if (last?.role !== 'user' || previous?.role !== 'assistant') return false;
  if (!last.content.some((block) => block.toolResult)) return false;
  return !previous.content[0]?.reasoningContent;
}

function novaEffort(effort: string): 'low' | 'medium' | 'high' {
  if (effort === 'minimal' || effort === 'low') return 'low';
  return effort === 'medium' ? 'medium' : 'high';
}
