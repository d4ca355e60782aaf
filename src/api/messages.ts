import { GatewayError } from '../errors.js';
import type { RouteContext } from '../http/route.js';
import { decodeMessagesRequest } from '../protocols/messages/decode-request.js';
import { encodeMessagesResponse } from '../protocols/messages/encode-response.js';
import { encodeMessagesStream } from '../protocols/messages/encode-stream.js';
import { messagesRequestSchema } from '../schemas/messages.js';
import { messagesTap } from '../protocols/stream-tap.js';
import { signedThinkingOnly } from '../protocols/messages/thinking-opaque.js';
import { handleText, type TextEndpoint } from './text.js';
import type { TextBody } from './text-body.js';

const messages: TextEndpoint = {
  protocol: 'messages',
  endpoint: '/v1/messages',
  schema: messagesRequestSchema,
  decode: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  tap: messagesTap,
  encodeStream: encodeMessagesStream,
  checkHeaders: requireVersionHeader,
  forPassthrough: withoutForeignThinking,
};

/** Thinking Anthropic did not sign (the gateway's answers from other upstreams) is left out; the body is then rebuilt. */
export function withoutForeignThinking(body: TextBody): TextBody {
  const messages = signedThinkingOnly(body.parsed.messages);
  return messages === body.parsed.messages ? body : { parsed: { ...body.parsed, messages }, text: undefined };
}

/** POST /v1/messages */
export function createMessage(context: RouteContext): Promise<Response> {
  return handleText(context, messages);
}

/** The spec (section 9) requires the vendor version header, a YYYY-MM-DD date. */
export function requireVersionHeader(request: Request): void {
  const version = request.headers.get('anthropic-version');
  if (!version) {
    throw new GatewayError({
      status: 400,
      message: 'The anthropic-version header is required (a date such as 2023-06-01).',
      param: 'anthropic-version',
      code: 'missing_required_header',
    });
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(version)) {
    throw new GatewayError({
      status: 400,
      message: `The anthropic-version header must be a date YYYY-MM-DD, received "${version.slice(0, 40)}".`,
      param: 'anthropic-version',
      code: 'invalid_header',
    });
  }
}
