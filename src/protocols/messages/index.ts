import type { ClientCodec, TextBody, UpstreamCodec } from '../codec.js';
import { decodeMessagesRequest } from './decode-request.js';
import { decodeMessagesResponse } from './decode-response.js';
import { messagesStreamDecoder } from './decode-stream.js';
import { encodeMessagesRequest } from './encode-request.js';
import { encodeMessagesResponse } from './encode-response.js';
import { MessagesStreamEncoder } from './encode-stream.js';
import { messagesRequestSchema } from './schema.js';
import { messagesTap } from './tap.js';
import { signedThinkingOnly } from './thinking-opaque.js';
import { fromMessagesUsage } from './usage.js';
import { requireVersionHeader } from './version-header.js';

/** Anthropic's Messages API (`POST /v1/messages`). */
export const messagesClient: ClientCodec = {
  protocol: 'messages',
  endpoint: '/v1/messages',
  schema: messagesRequestSchema,
  checkHeaders: requireVersionHeader,
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  streamEncoder: (context) => new MessagesStreamEncoder(context),
  tap: messagesTap,
  forPassthrough: withoutForeignThinking,
};

export const messagesUpstream: UpstreamCodec = {
  protocol: 'messages',
  encodeRequest: encodeMessagesRequest,
  decodeResponse: decodeMessagesResponse,
  streamDecoder: messagesStreamDecoder,
  usageOf: fromMessagesUsage,
};

/** Thinking Anthropic did not sign (the gateway's answers from other upstreams) is left out; the body is then rebuilt. */
function withoutForeignThinking(body: TextBody): TextBody {
  const messages = signedThinkingOnly(body.parsed.messages);
  return messages === body.parsed.messages ? body : { parsed: { ...body.parsed, messages }, text: undefined };
}

export { anthropicMessageSchema, anthropicToolSchema } from './schema.js';
export { anthropicStyle } from './style.js';
export { checkSourceUris } from './source-uris.js';
