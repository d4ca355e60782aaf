import * as v from 'valibot';
import { isGatewayError, upstreamInvalidResponse } from '../errors.js';
import { addHeaders } from '../http/add-headers.js';
import { jsonResponse } from '../http/json-response.js';
import type { RouteContext } from '../http/route.js';
import { newId, unixSeconds } from '../ids.js';
import { withLedger } from '../policy/ledger-frame.js';
import type { IRRequest } from '../protocols/ir.js';
import { compactionItem, responsesClient, responsesRequestFields, toResponsesUsage } from '../protocols/responses/index.js';
import type { CallContext, Provider } from '../providers/provider.js';
import type { Deployment } from '../routing/deployments.js';
import { takesReasoning } from '../routing/reasoning-support.js';
import { looseObj } from '../schemas/common.js';
import { generate } from './text/text-route.js';
import { readTextRequest } from './text-request.js';
import { checkStateReferences } from './model-rules.js';
import { expandedConversation } from './conversation-state.js';
import { firstDeployment } from './upstream-call.js';

const ENDPOINT = '/v1/responses/compact';

/**
 * Codex's `CompactionInput`: `model`, `input`, `instructions`, `tools`, `parallel_tool_calls`,
 * `reasoning`, `text`… Fields a Responses request also has are typed as there: the summary is
 * generated from them (`max_output_tokens: 0` would leave it empty).
 */
const compactSchema = looseObj(
  { ...responsesRequestFields, input: v.custom<unknown>((value) => value !== null && value !== undefined, 'an input (a string or an array of items)') },
  'a JSON object',
);

/**
 * POST /v1/responses/compact: a long conversation replaced by a short one that carries on from
 * it (Codex's remote compaction, when its provider is OpenAI's). A Responses upstream compacts it
 * itself; on any other, the model writes a summary through translation, answered in OpenAI's
 * shape (`response.compaction`): the user's own messages, the most recent first up to about
 * 20,000 tokens, then a compaction item holding the summary, which any upstream reads when it
 * comes back in `input` (`compaction-item.ts`). It is a generation: limits, quota and usage
 * events apply.
 */
export async function compactResponse(context: RouteContext): Promise<Response> {
  const { request } = context;
  const read = await readTextRequest(context, { protocol: 'responses', endpoint: ENDPOINT, schema: compactSchema });
  const { model } = read;
  checkStateReferences(model, read.body);
  // What the conversation continues from, from this key's stored responses; a reference that goes upstream is this key's.
  const body = await expandedConversation(context, read.body);
  // Before admission: a bad x-infergate-route-order is refused without counting against the key.
  const { deployment, provider, call, route } = firstDeployment(context, model, body);
  return withLedger(context, { model, endpoint: ENDPOINT, kind: 'text', stream: false }, async (ledger) => {
    ledger.routed(route);
    ledger.trying(deployment, 1);
    const answer = await compacted(provider, body, deployment, request, call);
    const json = answer as { id?: unknown; usage?: unknown };
    ledger.finish({ status: 'ok', usage: responsesClient.tap.usageOfJson(json), responseId: typeof json.id === 'string' ? json.id : undefined });
    return addHeaders(jsonResponse(answer), ledger.headers);
  });
}

/** Compacted by the upstream when it can, else summarized through translation (also when the upstream has no such endpoint). */
async function compacted(provider: Provider, body: Record<string, unknown>, deployment: Deployment, request: Request, call: CallContext): Promise<unknown> {
  if (provider.text?.compact) {
    try {
      return await forwarded(provider, body, deployment, request, call);
    } catch (error) {
      if (!(isGatewayError(error) && error.status === 404)) throw error;
    }
  }
  return summarized(provider, body, deployment, call);
}

/** The body as Codex sent it, model mapped; what OpenAI cannot read (the gateway's own items) made readable. */
function forwarded(provider: Provider, body: Record<string, unknown>, deployment: Deployment, request: Request, call: CallContext): Promise<unknown> {
  const sent = responsesClient.forPassthrough!({ parsed: body, text: undefined }).parsed;
  return provider.text!.compact!({ protocol: 'responses', body: { ...sent, model: deployment.upstreamModel }, headers: request.headers }, call);
}

const SUMMARY_REQUEST = [
  'Write a summary of this conversation so far that lets the work continue from the summary alone:',
  "the task and the user's goals and constraints, what has been done (files changed, commands run and what they showed),",
  'the decisions taken and why, the current state, and what remains to be done next.',
  'Keep names, paths, identifiers and numbers exact. Answer with the summary only.',
].join(' ');

/** About 20,000 tokens of the user's own messages are kept verbatim, as OpenAI's compaction keeps them. */
const KEPT_USER_CHARACTERS = 80_000;

async function summarized(provider: Provider, body: Record<string, unknown>, deployment: Deployment, call: CallContext): Promise<unknown> {
  const ir = responsesClient.decodeRequest({ ...body, stream: false }, deployment.upstreamModel);
  if (ir.reasoning && !takesReasoning(call.model, deployment.upstreamModel)) delete ir.reasoning;
  const summaryRequest: IRRequest = {
    ...ir,
    messages: [...ir.messages, { role: 'user', content: [{ type: 'text', text: SUMMARY_REQUEST }] }],
    stream: false,
    // The tools stay declared (the history may call them) but the answer must be text.
    ...(ir.tools && ir.tools.length > 0 ? { toolChoice: { type: 'none' } } : {}),
  };
  delete summaryRequest.responseFormat;
  const answer = await generate(provider, summaryRequest, call);
  const summary = answer.content
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('')
    .trim();
  if (summary === '') {
    throw upstreamInvalidResponse('The model answered the compaction request without a summary.');
  }
  return {
    id: newId('resp_'),
    object: 'response.compaction',
    created_at: unixSeconds(),
    output: [...keptUserMessages(body.input), compactionItem(summary)],
    usage: toResponsesUsage(answer.usage),
  };
}

/** The user's messages, the latest first while they fit in `KEPT_USER_CHARACTERS`, in their order. */
function keptUserMessages(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  if (!Array.isArray(input)) return [];
  const kept: unknown[] = [];
  let room = KEPT_USER_CHARACTERS;
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as { type?: unknown; role?: unknown } | null;
    if (typeof item !== 'object' || item === null || item.role !== 'user' || (item.type !== undefined && item.type !== 'message')) continue;
    const size = JSON.stringify(item).length;
    if (size > room) break;
    room -= size;
    kept.unshift(item);
  }
  return kept;
}
