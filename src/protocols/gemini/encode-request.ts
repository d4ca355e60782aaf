import { invalidRequest } from '../../errors.js';
import { isRecord, parseJson } from '../../json.js';
import { WorkBudget } from '../../work-budget.js';
import type { IRAssistantPart, IRContentPart, IRMessage, IRRequest, IRToolChoice } from '../ir.js';
import type { UpstreamEncodeOptions } from '../codec.js';
import { refuseStorageUris, type StorageUriCheck } from '../storage-uris.js';
import { toGeminiSchema } from './schema-subset.js';
import { isSynthesizedCallId } from './call-id.js';
import { admitParams, clientName } from '../upstream-params.js';
import { validatesSignatures, withSkippedSignatures } from './skip-signature.js';
import type {
  GeminiContent,
  GeminiGenerateContentRequest,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiThinkingConfig,
  GeminiThinkingLevel,
  GeminiToolConfig,
} from './wire.js';

/**
 * IR → Gemini `GenerateContentRequest` (the model goes in the path, not the body).
 *
 * - System text, wherever it was, becomes `systemInstruction`; tool results are `user` turns of
 *   `functionResponse` parts, and consecutive turns of one role are merged (Gemini wants parallel
 *   results in one turn).
 * - Reasoning text is not sent back (Gemini keeps its reasoning in the signatures); a reasoning
 *   part's Gemini `thoughtSignature` goes back on the part that follows it (see `ir.ts`). Other
 *   vendors' signatures and encrypted reasoning are dropped; a call left unsigned in the current
 *   turn gets Google's skip value on models that validate (`skip-signature.ts`).
 * - Call ids Gemini gave are sent back; ids the gateway made up for calls that had none are not.
 * - Request fields Gemini lacks (`parallel_tool_calls: false`, `logit_bias`, `store`…) are
 *   dropped or refused by `admitParams`; `n > 1` is refused as on every upstream that answers
 *   with one choice.
 */
export function encodeGeminiRequest(request: IRRequest, options: UpstreamEncodeOptions = {}): GeminiGenerateContentRequest {
  const ir = admitParams(request, 'gemini');
  const n = ir.passthrough.n;
  if (typeof n === 'number' && n > 1) throw invalidRequest('Several choices (n > 1) are not supported by this model.', 'n');

  const storage = options.storageUris ?? refuseStorageUris;
  const system = ir.system.filter((part) => part.text !== '').map((part): GeminiPart => ({ text: part.text }));
  const callNames = new Map<string, string>();
  const contents: GeminiContent[] = [];
  const add = (role: 'user' | 'model', parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  for (const [index, message] of ir.messages.entries()) {
    switch (message.role) {
      case 'system':
        system.push(...message.content.filter((part) => part.text !== '').map((part) => ({ text: part.text })));
        break;
      case 'user':
        add(
          'user',
          message.content.map((part, at) => contentPart(part, `messages[${index}].content[${at}]`, storage)),
        );
        break;
      case 'assistant':
        for (const part of message.content) if (part.type === 'tool_call') callNames.set(part.id, part.name);
        add('model', modelParts(message.content, `messages[${index}]`));
        break;
      case 'tool':
        add('user', toolResultParts(message, callNames, `messages[${index}]`, storage));
        break;
    }
  }
  if (contents.length === 0) throw invalidRequest('The request has no messages to send.', clientName(ir, 'messages'));

  // Calls Gemini did not sign (another model's turns) carry Google's skip value, where it validates.
  const body: GeminiGenerateContentRequest = { contents: validatesSignatures(ir.model) ? withSkippedSignatures(contents) : contents };
  if (system.length > 0) body.systemInstruction = { parts: system };
  // One budget for every schema of the request (`work-budget.ts`).
  const budget = new WorkBudget();
  if (ir.tools && ir.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: ir.tools.map((tool, i) => {
          const parameters = toGeminiSchema(tool.parameters ?? {}, budget, tool.schemaField ?? `tools[${i}].parameters`);
          return {
            name: tool.name,
            ...(tool.description !== undefined ? { description: tool.description } : {}),
            // Gemini refuses an OBJECT without properties: a tool without inputs has no parameters.
            ...(parameters.properties ? { parameters } : {}),
          };
        }),
      },
    ];
    const toolConfig = encodeToolChoice(ir.toolChoice);
    if (toolConfig) body.toolConfig = toolConfig;
  }
  const generationConfig = encodeGenerationConfig(ir, budget);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

/**
 * A content part. A URI Google reads with the operator's identity (`gs://`, a Files-API name or
 * URL) goes on only when `storage` allows it.
 */
function contentPart(part: IRContentPart, param: string, storage: StorageUriCheck): GeminiPart {
  if (part.type === 'text') return { text: part.text };
  const at = part.param ?? param;
  const fileData = (uri: string, url: string | undefined): GeminiPart => {
    storage(uri, at);
    return { fileData: { ...mimeOf(part.mediaType, url), fileUri: uri } };
  };
  if (part.type === 'image') {
    if (part.data !== undefined) return { inlineData: { mimeType: part.mediaType ?? 'image/png', data: part.data } };
    return fileData(part.url ?? '', part.url);
  }
  if (part.data !== undefined) return { inlineData: { mimeType: part.mediaType ?? 'application/pdf', data: part.data } };
  if (part.url !== undefined) return fileData(part.url, part.url);
  // Gemini's Files API names its files `files/{id}`; another vendor's file id means nothing there.
  if (part.fileId?.startsWith('files/')) return fileData(part.fileId, undefined);
  throw invalidRequest('File ids of another provider are not supported by this model; send the file as data or a URL.', at);
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

/** `fileData.mimeType`: the one given, else guessed from the URL's extension, else left out. */
function mimeOf(mediaType: string | undefined, url: string | undefined): { mimeType?: string } {
  if (mediaType) return { mimeType: mediaType };
  const extension = url ? /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase() : undefined;
  const guessed = extension ? EXTENSION_TYPES[extension] : undefined;
  return guessed ? { mimeType: guessed } : {};
}

/** A model turn's parts, each Gemini signature back on the part it signed. */
function modelParts(content: IRAssistantPart[], param: string): GeminiPart[] {
  const parts: GeminiPart[] = [];
  let signature: string | undefined;
  const signed = (part: GeminiPart): GeminiPart => {
    if (signature !== undefined) part.thoughtSignature = signature;
    signature = undefined;
    return part;
  };
  for (const [at, part] of content.entries()) {
    switch (part.type) {
      case 'reasoning':
        if (part.thoughtSignature !== undefined) signature = part.thoughtSignature;
        break;
      case 'text':
        if (part.text !== '' || signature !== undefined) parts.push(signed({ text: part.text }));
        break;
      case 'refusal':
        parts.push(signed({ text: part.refusal }));
        break;
      case 'tool_call':
        parts.push(
          signed({
            functionCall: {
              ...(isSynthesizedCallId(part.id) ? {} : { id: part.id }),
              name: part.name,
              args: callArguments(part.arguments, part.param ?? `${param}.content[${at}].arguments`),
            },
          }),
        );
        break;
    }
  }
  // A signature that closed the turn was on an empty text part.
  if (signature !== undefined) parts.push(signed({ text: '' }));
  return parts;
}

function callArguments(text: string, param: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const parsed = parseJson(text);
  if (!isRecord(parsed)) throw invalidRequest(`Tool call arguments ('${param}') must be a JSON object for this model.`, param);
  return parsed;
}

/** A tool result: a `functionResponse` named after its call, then its images or files as parts of their own. */
function toolResultParts(message: Extract<IRMessage, { role: 'tool' }>, callNames: Map<string, string>, param: string, storage: StorageUriCheck): GeminiPart[] {
  const name = message.name ?? callNames.get(message.toolCallId);
  if (name === undefined) {
    const at = message.param ?? `${param}.tool_call_id`;
    throw invalidRequest(`Tool result '${message.toolCallId}' ('${at}') answers no tool call of an earlier assistant turn.`, at);
  }
  const text = message.content
    .filter((part) => part.type === 'text')
    .map((part) => part.text)
    .join('');
  const media = message.content.filter((part) => part.type !== 'text').map((part, at) => contentPart(part, `${param}.content[${at}]`, storage));
  const value = resultValue(text);
  return [
    {
      functionResponse: {
        ...(isSynthesizedCallId(message.toolCallId) ? {} : { id: message.toolCallId }),
        name,
        response: message.isError ? { error: value } : { output: value },
      },
    },
    ...media,
  ];
}

/** A result that is JSON is sent as JSON (Gemini reads structure), anything else as text. */
function resultValue(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const parsed = parseJson(trimmed);
    if (parsed !== undefined) return parsed;
  }
  return text;
}

function encodeToolChoice(choice: IRToolChoice | undefined): GeminiToolConfig | undefined {
  switch (choice?.type) {
    case undefined:
      return undefined;
    case 'auto':
      return { functionCallingConfig: { mode: 'AUTO' } };
    case 'none':
      return { functionCallingConfig: { mode: 'NONE' } };
    case 'required':
      return { functionCallingConfig: { mode: 'ANY' } };
    case 'tool':
      return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  }
}

function encodeGenerationConfig(ir: IRRequest, budget: WorkBudget): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const stop = ir.stop?.filter((sequence) => sequence !== '');
  if (stop && stop.length > 0) {
    const name = clientName(ir, 'stop');
    if (stop.length > 5) throw invalidRequest(`'${name}' may hold at most 5 stop sequences for this model.`, name);
    config.stopSequences = stop;
  }
  if (ir.maxOutputTokens !== undefined) config.maxOutputTokens = ir.maxOutputTokens;
  if (ir.temperature !== undefined) config.temperature = ir.temperature;
  if (ir.topP !== undefined) config.topP = ir.topP;
  if (ir.topK !== undefined) config.topK = ir.topK;
  const { seed, presence_penalty: presence, frequency_penalty: frequency } = ir.passthrough;
  if (typeof seed === 'number') config.seed = seed;
  if (typeof presence === 'number') config.presencePenalty = presence;
  if (typeof frequency === 'number') config.frequencyPenalty = frequency;

  const format = ir.responseFormat;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  else if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    config.responseSchema = toGeminiSchema(format.schema, budget, format.schemaField ?? 'response_format');
  }
  const thinking = thinkingConfig(ir.model, ir.reasoning);
  if (thinking) config.thinkingConfig = thinking;
  return config;
}

/** Thinking budgets for an effort, on models that take a budget (Gemini 2.5). */
const EFFORT_BUDGETS: Record<string, number> = { minimal: 512, low: 1024, medium: 8192, high: 24576, xhigh: 32768, max: 32768 };

/**
 * The client's reasoning options as Gemini's `thinkingConfig`: an explicit budget is sent as
 * `thinkingBudget`; an effort becomes a `thinkingLevel` on Gemini 3 (Pro knows only LOW and HIGH)
 * and a budget on earlier models. Thought summaries are asked for whenever reasoning is on, so
 * each client gets its reasoning text.
 */
export function thinkingConfig(model: string, reasoning: IRRequest['reasoning']): GeminiThinkingConfig | undefined {
  if (!reasoning) return undefined;
  const { effort, budgetTokens } = reasoning;
  if (budgetTokens !== undefined) return { thinkingBudget: budgetTokens, includeThoughts: budgetTokens !== 0 };
  if (effort === undefined) return undefined;
  if (/gemini-3/.test(model)) {
    return { thinkingLevel: thinkingLevel(effort, /pro/.test(model)), includeThoughts: effort !== 'none' };
  }
  if (effort === 'none') return { thinkingBudget: 0 };
  return { thinkingBudget: EFFORT_BUDGETS[effort] ?? EFFORT_BUDGETS.medium!, includeThoughts: true };
}

function thinkingLevel(effort: string, pro: boolean): GeminiThinkingLevel {
  const high = effort === 'high' || effort === 'xhigh' || effort === 'max';
  if (pro) return high || effort === 'medium' ? 'HIGH' : 'LOW';
  if (high) return 'HIGH';
  if (effort === 'medium') return 'MEDIUM';
  return effort === 'low' ? 'LOW' : 'MINIMAL';
}
