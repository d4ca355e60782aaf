import type { RouteContext } from '../http/route.js';
import { decodeResponsesRequest } from '../protocols/responses/decode-request.js';
import { encodeResponsesResponse } from '../protocols/responses/encode-response.js';
import { encodeResponsesStream } from '../protocols/responses/encode-stream.js';
import { responsesRequestSchema } from '../schemas/responses.js';
import { responsesTap } from '../protocols/stream-tap.js';
import { replayableReasoning } from '../protocols/responses/reasoning-opaque.js';
import { withReadableCompaction } from '../protocols/responses/compaction-item.js';
import { handleText, type TextEndpoint } from './text.js';
import type { TextBody } from './text-body.js';

const responses: TextEndpoint = {
  protocol: 'responses',
  endpoint: '/v1/responses',
  schema: responsesRequestSchema,
  decode: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  tap: responsesTap,
  encodeStream: encodeResponsesStream,
  forPassthrough: withoutForeignReasoning,
};

/**
 * Reasoning items an OpenAI upstream cannot take back are left out, and the gateway's compaction
 * items become the user messages they stand for (the body is then rebuilt).
 */
export function withoutForeignReasoning(body: TextBody): TextBody {
  const input = withReadableCompaction(replayableReasoning(body.parsed.input, body.parsed.store));
  return input === body.parsed.input ? body : { parsed: { ...body.parsed, input }, text: undefined };
}

/** POST /v1/responses and its legacy alias /responses */
export function createResponse(context: RouteContext): Promise<Response> {
  return handleText(context, responses);
}
