import type { ClientCodec, UpstreamCodec } from '../codec.js';
import { decodeChatRequest } from './decode-request.js';
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
  encodeResponse: encodeChatResponse,
  streamEncoder: (context) => new ChatStreamEncoder(context),
  tap: chatTap,
};

export const chatUpstream: UpstreamCodec = {
  protocol: 'chat',
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  streamDecoder: chatStreamDecoder,
  usageOf: fromChatUsage,
};
