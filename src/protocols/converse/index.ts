import type { UpstreamCodec } from '../codec.js';
import { decodeConverseResponse } from './decode-response.js';
import { converseStreamDecoder } from './decode-stream.js';
import { encodeConverseRequest } from './encode-request.js';
import { fromConverseUsage } from './usage.js';

/**
 * Amazon Bedrock's Converse API (`/model/{id}/converse`, `/converse-stream`), an upstream
 * protocol only: no client speaks it to the gateway, so it is not a `TextProtocol` and has no
 * client codec. Its stream decoder reads event-stream messages given as `{event, data}`.
 */
export const converseUpstream: Omit<UpstreamCodec, 'protocol'> & { protocol: 'converse' } = {
  protocol: 'converse',
  encodeRequest: encodeConverseRequest,
  decodeResponse: decodeConverseResponse,
  streamDecoder: converseStreamDecoder,
  usageOf: fromConverseUsage,
};

export { bedrockException, validationParam } from './exception.js';
export { bedrockCatalogIds, bedrockFamily, isBedrockClaude } from './model-family.js';
