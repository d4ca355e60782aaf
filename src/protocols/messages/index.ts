import { isRecord } from '../../json.js';
import type { ClientCodec, TextBody, UpstreamCodec } from '../codec.js';
import { withUnsigned, withUnsignedField } from '../signed-call-id.js';
import { decodeMessagesRequest, MESSAGES_READ_FIELDS } from './decode-request.js';
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
  readFields: MESSAGES_READ_FIELDS,
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

/**
 * Thinking Anthropic did not sign (the gateway's answers from other upstreams) is left out, and
 * tool use ids lose the Gemini signatures the gateway put in them (`signed-call-id.ts`); the body
 * is then rebuilt.
 */
function withoutForeignThinking(body: TextBody): TextBody {
  const signed = signedThinkingOnly(body.parsed.messages);
  const messages = Array.isArray(signed) ? withUnsigned(signed, unsignedBlocks) : signed;
  return messages === body.parsed.messages ? body : { parsed: { ...body.parsed, messages }, text: undefined };
}

function unsignedBlocks(message: unknown): unknown {
  if (!isRecord(message) || !Array.isArray(message.content)) return message;
  const content = withUnsigned(message.content, (block: unknown) => {
    if (!isRecord(block)) return block;
    if (block.type === 'tool_use') return withUnsignedField(block, 'id');
    return block.type === 'tool_result' ? withUnsignedField(block, 'tool_use_id') : block;
  });
  return content === message.content ? message : { ...message, content };
}

export { anthropicMessageSchema, anthropicToolSchema } from './schema.js';
export { anthropicStyle } from './style.js';
export { checkSourceUris } from './source-uris.js';
