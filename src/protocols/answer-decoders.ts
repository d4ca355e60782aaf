import type { UpstreamCodec } from './codec.js';
import { chatUpstream } from './chat/index.js';
import { geminiUpstream } from './gemini/index.js';
import type { TextProtocol } from './ir.js';
import { messagesUpstream } from './messages/index.js';
import { responsesUpstream } from './responses/index.js';

/**
 * Each protocol's upstream decoder reads what its clients get: the answer the gateway sent
 * (passed through or translated) is in the client's protocol, so one decoder per protocol turns
 * either into the IR (the response cache and the request log's content read answers so).
 */
export const ANSWER_DECODERS: Record<TextProtocol, UpstreamCodec> = {
  chat: chatUpstream,
  responses: responsesUpstream,
  messages: messagesUpstream,
  gemini: geminiUpstream,
};
