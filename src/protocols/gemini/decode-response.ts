import { upstreamInvalidResponse } from '../../errors.js';
import { isRecord } from '../../json.js';
import { EventFold } from '../accumulate.js';
import type { IRResponse, IRStreamEvent } from '../ir.js';
import { GeminiChunkReader } from './decode-stream.js';

/** Gemini `GenerateContentResponse` JSON → IR: read as the one chunk of a stream, then folded. */
export function decodeGeminiResponse(json: unknown): IRResponse {
  if (!isRecord(json)) throw upstreamInvalidResponse('The upstream returned an invalid response');
  const reader = new GeminiChunkReader();
  const events: IRStreamEvent[] = [];
  reader.chunk(json, events);
  reader.complete(events);
  const fold = new EventFold();
  for (const event of events) fold.push(event);
  return fold.response();
}
