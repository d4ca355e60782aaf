import type { RouteContext } from '../http/route.js';
import { decodeChatRequest } from '../protocols/chat/decode-request.js';
import { encodeChatResponse } from '../protocols/chat/encode-response.js';
import { encodeChatStream } from '../protocols/chat/encode-stream.js';
import { chatRequestSchema } from '../schemas/chat.js';
import { chatTap } from '../protocols/stream-tap.js';
import { handleText, type TextEndpoint } from './text.js';

const chat: TextEndpoint = {
  protocol: 'chat',
  endpoint: '/v1/chat/completions',
  schema: chatRequestSchema,
  decode: decodeChatRequest,
  encodeResponse: encodeChatResponse,
  tap: chatTap,
  encodeStream: encodeChatStream,
};

/** POST /v1/chat/completions */
export function chatCompletions(context: RouteContext): Promise<Response> {
  return handleText(context, chat);
}
