import { isRecord } from '../../json.js';
import type { ClientCodec, TextBody, UpstreamCodec } from '../codec.js';
import { withUnsigned, withUnsignedField } from '../signed-call-id.js';
import { decodeChatRequest, CHAT_READ_FIELDS } from './decode-request.js';
import { decodeChatResponse } from './decode-response.js';
import { chatStreamDecoder } from './decode-stream.js';
import { encodeChatRequest } from './encode-request.js';
import { encodeChatResponse } from './encode-response.js';
import { ChatStreamEncoder } from './encode-stream.js';
import { chatRequestSchema } from './schema.js';
import { chatTap } from './tap.js';
import { fromChatUsage } from './usage.js';

/** OpenAI's Chat Completions (`POST /v1/chat/completions`), which every OpenAI-compatible server speaks. */
export const chatClient: ClientCodec = {
  protocol: 'chat',
  endpoint: '/v1/chat/completions',
  schema: chatRequestSchema,
  decodeRequest: decodeChatRequest,
  readFields: CHAT_READ_FIELDS,
  encodeResponse: encodeChatResponse,
  streamEncoder: (context) => new ChatStreamEncoder(context),
  tap: chatTap,
  forPassthrough: withUnsignedCallIds,
};

export const chatUpstream: UpstreamCodec = {
  protocol: 'chat',
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  streamDecoder: chatStreamDecoder,
  usageOf: fromChatUsage,
};

/**
 * The tool call ids an upstream gets: without the Gemini signatures the gateway put in them
 * (`signed-call-id.ts`), which OpenAI would refuse as too long. The body is then rebuilt.
 */
function withUnsignedCallIds(body: TextBody): TextBody {
  const messages = body.parsed.messages;
  if (!Array.isArray(messages)) return body;
  const unsigned = withUnsigned(messages, (message: unknown) => {
    const answer = withUnsignedField(message, 'tool_call_id');
    if (!isRecord(answer) || !Array.isArray(answer.tool_calls)) return answer;
    const calls = withUnsigned(answer.tool_calls, (call: unknown) => withUnsignedField(call, 'id'));
    return calls === answer.tool_calls ? answer : { ...answer, tool_calls: calls };
  });
  return unsigned === messages ? body : { parsed: { ...body.parsed, messages: unsigned }, text: undefined };
}
