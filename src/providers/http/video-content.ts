import { GatewayError } from '../../errors.js';
import type { VideoContent } from '../media.js';
import { upstreamChunks, type UpstreamResult } from './upstream-client.js';
import { upstreamError } from './upstream-error.js';

/** Headers of a video download that the client needs (length and range for seeking). */
const KEPT = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'last-modified', 'etag'];

/**
 * An upstream video download as `VideoContent`: 200 or 206 streamed through with the headers a
 * player needs; 416 passed on with its `content-range`; other errors thrown.
 */
export async function videoContentOf(result: UpstreamResult): Promise<VideoContent> {
  if (result.status === 416) {
    result.body.destroy();
    const range = header(result, 'content-range');
    throw new GatewayError({
      status: 416,
      message: 'The requested range is outside the video.',
      code: 'range_not_satisfiable',
      headers: range ? { 'content-range': range } : {},
    });
  }
  if (result.status >= 400) throw await upstreamError(result);
  const headers: Record<string, string> = {};
  for (const name of KEPT) {
    const value = header(result, name);
    if (value) headers[name] = value;
  }
  // Some storage answers a generic type; the spec's content is video/mp4.
  if (!headers['content-type'] || /octet-stream|binary/.test(headers['content-type'])) headers['content-type'] = 'video/mp4';
  return { status: result.status === 206 ? 206 : 200, headers, body: upstreamChunks(result.body) };
}

function header(result: UpstreamResult, name: string): string | undefined {
  const value = result.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
