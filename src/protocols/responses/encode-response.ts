import { newId } from '../../ids.js';
import type { EncodeContext } from '../codec.js';
import type { IRResponse } from '../ir.js';
import { publicId } from '../public-id.js';
import { toEncryptedContent } from './reasoning-opaque.js';
import {
  buildResponse,
  finishedStatus,
  functionCallItem,
  messageItem,
  outputTextPart,
  reasoningItem,
  refusalPart,
} from './response-object.js';

type Json = Record<string, unknown>;

/**
 * IR response → Response object. Output items follow the IR parts in order: reasoning items,
 * one message item per run of text/refusal parts, one function_call item per tool call
 * (`call_id` = the IR id, so the client's `function_call_output` finds its call).
 * `output_text` is not sent: the SDKs compute it from the items.
 */
export function encodeResponsesResponse(response: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  const status = finishedStatus(response.finishReason);
  const output: Json[] = [];
  let message: Json[] | undefined;

  for (const part of response.content) {
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
      output.push(functionCallItem(newId('fc_'), part.id, part.name, part.arguments, 'completed'));
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
