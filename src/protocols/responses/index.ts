import type { ClientCodec, TextBody, UpstreamCodec } from '../codec.js';
import { withReadableCompaction } from './compaction-item.js';
import { withUnsigned, withUnsignedField } from '../signed-call-id.js';
import { decodeResponsesRequest, RESPONSES_READ_FIELDS } from './decode-request.js';
import { decodeResponsesResponse } from './decode-response.js';
import { responsesStreamDecoder } from './decode-stream.js';
import { encodeResponsesRequest } from './encode-request.js';
import { encodeResponsesResponse } from './encode-response.js';
import { ResponsesStreamEncoder } from './encode-stream.js';
import { replayableReasoning } from './reasoning-opaque.js';
import { responsesRequestSchema } from './schema.js';
import { responsesTap } from './tap.js';
import { fromResponsesUsage } from './usage.js';

/** OpenAI's Responses API (`POST /v1/responses`, and `/responses`). */
export const responsesClient: ClientCodec = {
  protocol: 'responses',
  endpoint: '/v1/responses',
  schema: responsesRequestSchema,
  decodeRequest: decodeResponsesRequest,
  readFields: RESPONSES_READ_FIELDS,
  encodeResponse: encodeResponsesResponse,
  streamEncoder: (context) => new ResponsesStreamEncoder(context),
  tap: responsesTap,
  forPassthrough: withoutForeignReasoning,
  storesConversations: true,
};

export const responsesUpstream: UpstreamCodec = {
  protocol: 'responses',
  encodeRequest: encodeResponsesRequest,
  decodeResponse: decodeResponsesResponse,
  streamDecoder: responsesStreamDecoder,
  usageOf: fromResponsesUsage,
};

/**
 * Reasoning items an OpenAI upstream cannot take back are left out, the gateway's compaction
 * items become the user messages they stand for, and call ids lose the Gemini signatures the
 * gateway put in them (`signed-call-id.ts`; OpenAI refuses a `call_id` over 64 characters). The
 * body is then rebuilt.
 */
function withoutForeignReasoning(body: TextBody): TextBody {
  const replayable = withReadableCompaction(replayableReasoning(body.parsed.input, body.parsed.store));
  const input = Array.isArray(replayable) ? withUnsigned(replayable, (item: unknown) => withUnsignedField(item, 'call_id')) : replayable;
  return input === body.parsed.input ? body : { parsed: { ...body.parsed, input }, text: undefined };
}

export { compactionItem } from './compaction-item.js';
export { itemReferenceRefused } from './decode-request.js';
export { responsesRequestFields } from './schema.js';
export { toResponsesUsage } from './usage.js';
