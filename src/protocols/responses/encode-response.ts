import { newId } from '../../ids.js';
import type { EncodeContext } from '../codec.js';
import type { IRResponse } from '../ir.js';
import { publicId } from '../public-id.js';
import { ClientTools } from './client-tools.js';
import { toEncryptedContent } from './reasoning-opaque.js';
import { buildResponse, callItem, callItemId, finishedStatus, messageItem, outputTextPart, reasoningItem, refusalPart } from './response-object.js';
import type { Json } from '../../json.js';
import { withSignedCallIds } from '../signed-call-id.js';

/**
 * IR response → Response object. Output items follow the IR parts in order: reasoning items,
 * one message item per run of text/refusal parts, one call item per tool call (`call_id` = the
 * IR id, so the client's output finds its call): a `function_call` (with its `namespace`), or the
 * item of the tool kind the client offered (`custom_tool_call`, `tool_search_call`, …). A Gemini
 * signature rides in the reasoning item's `encrypted_content` and in the `call_id` of the call it
 * signs, which clients send back without reasoning items (`signed-call-id.ts`).
 * `output_text` is not sent: the SDKs compute it from the items.
 */
export function encodeResponsesResponse(response: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  const status = finishedStatus(response.finishReason);
  const output: Json[] = [];
  const tools = ClientTools.of(ctx.request);
  let message: Json[] | undefined;

  for (const part of withSignedCallIds(response.content)) {
    if (part.type === 'text' || part.type === 'refusal') {
      if (!message) {
        message = [];
        output.push(messageItem(newId('msg_'), message, 'completed'));
      }
      message.push(part.type === 'text' ? outputTextPart(part.text) : refusalPart(part.refusal));
      continue;
    }
    message = undefined;
    if (part.type === 'reasoning') {
      const id = part.id?.startsWith('rs_') ? part.id : newId('rs_');
      output.push(reasoningItem(id, part.text, toEncryptedContent(part)));
    } else {
      const tool = tools.lookup(part.name);
      output.push(callItem(tool, part.name, callItemId(tool), part.id, part.arguments, 'completed'));
    }
  }
  // A cut-off answer is cut in its last item only; the ones before it were finished.
  const last = output.at(-1);
  if (status === 'incomplete' && last && last.type !== 'reasoning') last.status = 'incomplete';

  return buildResponse(
    {
      id: publicId('resp_', response.id),
      createdAt: response.created,
      status,
      output,
      usage: response.usage,
      finishReason: response.finishReason,
    },
    ctx,
  );
}
