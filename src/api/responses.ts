import type { RouteContext } from '../http/route.js';
import { decodeResponsesRequest } from '../protocols/responses/decode-request.js';
import { encodeResponsesResponse } from '../protocols/responses/encode-response.js';
import { encodeResponsesStream } from '../protocols/responses/encode-stream.js';
import { responsesRequestSchema } from '../schemas/responses.js';
import { responsesTap } from '../protocols/stream-tap.js';
import { handleText, type TextEndpoint } from './text.js';

const responses: TextEndpoint = {
  protocol: 'responses',
  endpoint: '/v1/responses',
  schema: responsesRequestSchema,
  decode: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  tap: responsesTap,
  encodeStream: encodeResponsesStream,
};

/** POST /v1/responses and its legacy alias /responses */
export function createResponse(context: RouteContext): Promise<Response> {
  return handleText(context, responses);
}
