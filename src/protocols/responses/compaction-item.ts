import { invalidRequest } from '../../errors.js';
import { newId } from '../../ids.js';
import { isRecord, type Json } from '../../json.js';
import { expectString } from '../decode-helpers.js';
import type { IRMessage } from '../ir.js';

/**
 * Compaction items (`{"type":"compaction","encrypted_content":…}`) stand for the earlier part of a
 * conversation once a client such as Codex has compacted it (`POST /v1/responses/compact`), and
 * come back in later requests' `input`. OpenAI's are encrypted, and only OpenAI reads them. The
 * gateway makes its own when the model compacts through translation: a summary the model wrote,
 * behind a gateway-private prefix, which any upstream reads as a user message.
 */
const PREFIX = 'infergate-compaction:';

/** The compaction item holding a summary the model wrote. */
export function compactionItem(summary: string): { id: string; type: 'compaction'; encrypted_content: string } {
  return { id: newId('cmp_'), type: 'compaction', encrypted_content: PREFIX + Buffer.from(summary, 'utf8').toString('base64url') };
}

/** A compaction item in `input`, for an upstream that is not OpenAI's: the summary as a user message. */
export function decodeCompactionItem(item: Json, param: string): IRMessage {
  const summary = summaryOf(expectString(item, 'encrypted_content', `${param}.encrypted_content`));
  if (summary === undefined) {
    throw invalidRequest(
      `This compaction item was made by OpenAI and only an OpenAI upstream can read it; continue this conversation on such a model, or compact it again on this one.`,
      `${param}.encrypted_content`,
      'unsupported_parameter',
    );
  }
  return { role: 'user', content: [{ type: 'text', text: summaryMessage(summary) }] };
}

/**
 * The input to forward to an OpenAI Responses upstream: the gateway's compaction items as the
 * user messages they stand for (OpenAI cannot decrypt them), OpenAI's own untouched. Returns the
 * same array when there is none.
 */
export function withReadableCompaction(input: unknown): unknown {
  if (!Array.isArray(input) || !input.some(isGatewayCompaction)) return input;
  return input.map((item: unknown) =>
    isGatewayCompaction(item)
      ? { type: 'message', role: 'user', content: [{ type: 'input_text', text: summaryMessage(summaryOf(item.encrypted_content as string)!) }] }
      : item,
  );
}

function isGatewayCompaction(item: unknown): item is Json {
  return isRecord(item) && item.type === 'compaction' && typeof item.encrypted_content === 'string' && item.encrypted_content.startsWith(PREFIX);
}

function summaryOf(encrypted: string): string | undefined {
  if (!encrypted.startsWith(PREFIX)) return undefined;
  return Buffer.from(encrypted.slice(PREFIX.length), 'base64url').toString('utf8');
}

function summaryMessage(summary: string): string {
  return `Summary of the earlier part of this conversation, which was compacted:\n\n${summary}`;
}
