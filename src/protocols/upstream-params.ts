import { type GatewayError, invalidRequest } from '../errors.js';
import type { ClientField, IRRequest, ParamName } from './ir.js';

/**
 * What the gateway does with a request field an upstream wire cannot express, for every field of
 * the IR and every OpenAI field the decoders keep in `passthrough` (docs/providers.md, "Parameters
 * an upstream lacks"). Each field is of one kind:
 *
 * - `hint`: tunes sampling or latency; the answer keeps its meaning without it. Dropped, and named
 *   as the client sent it in `x-infergate-dropped-params`; a 400 when the model or key sets
 *   `strictParams`.
 * - `meaning`: without it the answer would change shape or meaning (a JSON mode, stop sequences).
 *   Always a 400 naming the field as the client sent it.
 * - `bookkeeping`: about storage, caching, billing or tracing, never the answer. Dropped silently.
 *
 * Each upstream encoder calls `admitParams` first with its wire and the facts it knows (thinking
 * on, the Bedrock model family), and encodes what is left.
 */

export type UpstreamWire = 'chat' | 'responses' | 'messages' | 'gemini' | 'converse';

/** What an encoder knows of its call beyond the IR. */
export interface WireFacts {
  /** Claude's extended thinking is on for this call (Messages, or Claude on Converse). */
  thinking?: boolean | undefined;
  /** The vendor of a Bedrock model (`anthropic`, `amazon`, `meta`…), undefined when unknown. */
  family?: string | undefined;
}

type Kind = 'hint' | 'meaning' | 'bookkeeping';
/** Whether a wire takes the field: always, never, or depending on the request and the call. */
type Support = boolean | ((ir: IRRequest, facts: WireFacts) => boolean);

interface ParamRule {
  kind: Kind;
  /** Where the IR holds it: its own field, or a key of `passthrough`. */
  in: 'ir' | 'passthrough';
  /** The name in Chat Completions, for an IR that did not record the client's own (`IRRequest.clientFields`). */
  chatName: string;
  wires: Record<UpstreamWire, Support>;
  /** Whether the request sets it; default: the field is not undefined. */
  isSet?: (ir: IRRequest) => boolean;
}

const OPENAI_ONLY = { chat: true, responses: true, messages: false, gemini: false, converse: false } as const;

/** Claude models from Opus 4.1 on refuse `temperature` and `top_p` together ("Please use only one"). */
const CLAUDE_ONE_SAMPLER = /claude-(?:opus-4-[1-9]|sonnet-4-[5-9]|haiku-4-[5-9]|(?:opus|sonnet|haiku)-(?:[5-9]|\d{2,}))/;

/**
 * OpenAI's reasoning models (o-series, GPT-5 but its `-chat` models) refuse `temperature` other
 * than 1, `top_p`, the penalties, `logit_bias` and stop sequences ("Unsupported parameter:
 * 'temperature' is not supported with this model").
 */
const OPENAI_REASONING = /(?:^|\/)(?:o[1-9](?:-|$)|gpt-5(?!.*-chat))/;
const samplesOnOpenAI = (ir: IRRequest): boolean => !OPENAI_REASONING.test(ir.model);

const noThinking = (_ir: IRRequest, facts: WireFacts): boolean => !facts.thinking;

/** With thinking on, Claude takes `top_p` from 0.95 up; the newer models never with `temperature`. */
function claudeTopP(ir: IRRequest, facts: WireFacts): boolean {
  if (facts.thinking) return (ir.topP ?? 1) >= 0.95;
  return ir.temperature === undefined || !CLAUDE_ONE_SAMPLER.test(ir.model);
}

/** On Converse, Claude's rule for Claude and no limit for the other vendors. */
const onClaude =
  (check: (ir: IRRequest, facts: WireFacts) => boolean): Support =>
  (ir, facts) =>
    facts.family !== 'anthropic' || check(ir, facts);

const PARAMS = {
  temperature: {
    kind: 'hint',
    in: 'ir',
    chatName: 'temperature',
    wires: { chat: samplesOnOpenAI, responses: samplesOnOpenAI, messages: noThinking, gemini: true, converse: noThinking },
  },
  topP: {
    kind: 'hint',
    in: 'ir',
    chatName: 'top_p',
    wires: { chat: samplesOnOpenAI, responses: samplesOnOpenAI, messages: claudeTopP, gemini: true, converse: onClaude(claudeTopP) },
  },
  topK: {
    kind: 'hint',
    in: 'ir',
    chatName: 'top_k',
    wires: {
      chat: false,
      responses: false,
      messages: noThinking,
      gemini: true,
      // Converse has no field of its own: it goes in the vendor's words to Claude, Cohere, Mistral and Nova.
      converse: (_ir, facts) => !facts.thinking && ['anthropic', 'cohere', 'mistral', 'amazon'].includes(facts.family ?? ''),
    },
  },
  stop: {
    kind: 'meaning',
    in: 'ir',
    chatName: 'stop',
    wires: { chat: samplesOnOpenAI, responses: false, messages: true, gemini: true, converse: true },
    isSet: (ir) => (ir.stop?.length ?? 0) > 0,
  },
  maxOutputTokens: {
    kind: 'meaning',
    in: 'ir',
    chatName: 'max_completion_tokens',
    wires: { chat: true, responses: true, messages: true, gemini: true, converse: true },
  },
  responseFormat: {
    kind: 'meaning',
    in: 'ir',
    chatName: 'response_format',
    // Claude and Converse take a JSON schema, but have no "any JSON" mode.
    wires: {
      chat: true,
      responses: true,
      messages: (ir) => ir.responseFormat?.type !== 'json_object',
      gemini: true,
      converse: (ir) => ir.responseFormat?.type !== 'json_object',
    },
  },
  toolChoice: {
    kind: 'meaning',
    in: 'ir',
    chatName: 'tool_choice',
    wires: { chat: true, responses: true, messages: true, gemini: true, converse: true },
  },
  parallelToolCalls: {
    kind: 'hint',
    in: 'ir',
    chatName: 'parallel_tool_calls',
    wires: { chat: true, responses: true, messages: true, gemini: false, converse: false },
    // `true` is every upstream's default: only asking for one call at a time can be lost.
    isSet: (ir) => ir.parallelToolCalls === false,
  },
  reasoning: {
    kind: 'hint',
    in: 'ir',
    chatName: 'reasoning_effort',
    wires: { chat: true, responses: true, messages: true, gemini: true, converse: true },
  },
  metadata: {
    kind: 'bookkeeping',
    in: 'ir',
    chatName: 'metadata',
    wires: { chat: true, responses: true, messages: false, gemini: false, converse: false },
  },
  user: {
    kind: 'bookkeeping',
    in: 'ir',
    chatName: 'user',
    wires: { chat: true, responses: true, messages: true, gemini: false, converse: false },
  },
  seed: { kind: 'hint', in: 'passthrough', chatName: 'seed', wires: { ...OPENAI_ONLY, responses: false, gemini: true } },
  frequency_penalty: {
    kind: 'hint',
    in: 'passthrough',
    chatName: 'frequency_penalty',
    wires: { ...OPENAI_ONLY, chat: samplesOnOpenAI, responses: false, gemini: true },
  },
  presence_penalty: {
    kind: 'hint',
    in: 'passthrough',
    chatName: 'presence_penalty',
    wires: { ...OPENAI_ONLY, chat: samplesOnOpenAI, responses: false, gemini: true },
  },
  logit_bias: { kind: 'hint', in: 'passthrough', chatName: 'logit_bias', wires: { ...OPENAI_ONLY, chat: samplesOnOpenAI, responses: false } },
  verbosity: { kind: 'hint', in: 'passthrough', chatName: 'verbosity', wires: OPENAI_ONLY },
  prediction: { kind: 'hint', in: 'passthrough', chatName: 'prediction', wires: { ...OPENAI_ONLY, responses: false } },
  service_tier: { kind: 'bookkeeping', in: 'passthrough', chatName: 'service_tier', wires: OPENAI_ONLY },
  store: { kind: 'bookkeeping', in: 'passthrough', chatName: 'store', wires: OPENAI_ONLY },
  prompt_cache_key: { kind: 'bookkeeping', in: 'passthrough', chatName: 'prompt_cache_key', wires: OPENAI_ONLY },
  prompt_cache_retention: { kind: 'bookkeeping', in: 'passthrough', chatName: 'prompt_cache_retention', wires: OPENAI_ONLY },
  prompt_cache_options: { kind: 'bookkeeping', in: 'passthrough', chatName: 'prompt_cache_options', wires: OPENAI_ONLY },
  safety_identifier: { kind: 'bookkeeping', in: 'passthrough', chatName: 'safety_identifier', wires: OPENAI_ONLY },
  moderation: { kind: 'bookkeeping', in: 'passthrough', chatName: 'moderation', wires: OPENAI_ONLY },
  // What it asks for (encrypted reasoning, tool results) only Responses returns.
  include: { kind: 'bookkeeping', in: 'passthrough', chatName: 'include', wires: { ...OPENAI_ONLY, chat: false } },
} satisfies Record<ParamName, ParamRule>;

const RULES: Record<ParamName, ParamRule> = PARAMS;

/** The field's name as the client sent it (`generationConfig.topK`), or Chat's when the IR does not know. */
export function clientName(ir: IRRequest, param: ClientField): string {
  return ir.clientFields?.[param] ?? (param === 'messages' ? 'messages' : RULES[param].chatName);
}

/**
 * The IR with what `wire` cannot take left out: a hint is dropped and added to
 * `ir.droppedParams` (or refused with `strictParams`), a field of meaning is refused, bookkeeping
 * goes silently. The IR passed is not changed (the arrays it shares are).
 */
export function admitParams(ir: IRRequest, wire: UpstreamWire, facts: WireFacts = {}): IRRequest {
  let admitted: IRRequest | undefined;
  for (const [param, rule] of Object.entries(RULES) as [ParamName, ParamRule][]) {
    const set = rule.isSet ? rule.isSet(ir) : (rule.in === 'ir' ? ir[param as keyof IRRequest] : ir.passthrough[param]) !== undefined;
    if (!set) continue;
    const support = rule.wires[wire];
    if (typeof support === 'boolean' ? support : support(ir, facts)) continue;
    if (rule.kind !== 'bookkeeping') refuseOrNote(ir, param, rule.kind, wire);
    admitted ??= { ...ir, passthrough: { ...ir.passthrough } };
    if (rule.in === 'passthrough') delete admitted.passthrough[param];
    else dropIRField(admitted, param);
  }
  return admitted ?? ir;
}

/**
 * Notes a hint the upstream model cannot take (outside any wire's rule: reasoning on a model that
 * does not reason), or refuses it under `strictParams`.
 */
export function dropHint(ir: IRRequest, param: ParamName, why: string): void {
  dropField(ir, clientName(ir, param), why);
}

/** Notes a field, by the name the client sent it under, that does not reach the upstream, or refuses it under `strictParams`. */
export function dropField(ir: IRRequest, name: string, why: string): void {
  if (ir.strictParams) throw unsupported(name, why);
  if (ir.droppedParams && !ir.droppedParams.includes(name)) ir.droppedParams.push(name);
}

const WIRE_NAMES: Record<UpstreamWire, string> = {
  chat: 'Chat Completions',
  responses: 'the Responses API',
  messages: 'Anthropic Messages',
  gemini: 'the Gemini API',
  converse: 'Bedrock Converse',
};

function refuseOrNote(ir: IRRequest, param: ParamName, kind: Kind, wire: UpstreamWire): void {
  const why = `its upstream speaks ${WIRE_NAMES[wire]}`;
  if (kind === 'hint') dropHint(ir, param, why);
  else throw unsupported(clientName(ir, param), why);
}

function unsupported(name: string, why: string): GatewayError {
  return invalidRequest(`'${name}' is not supported by this model (${why}).`, name, 'unsupported_parameter');
}

function dropIRField(ir: IRRequest, param: ParamName): void {
  if (param === 'parallelToolCalls' && ir.toolChoice && 'parallel' in ir.toolChoice) {
    const { parallel: _, ...choice } = ir.toolChoice;
    ir.toolChoice = choice;
  }
  delete (ir as unknown as Record<string, unknown>)[param];
}
