import { setBounded } from '../../bounded-map.js';
import { createHash } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import { parseRange } from '../../http/byte-range.js';
import type { VideoContent, VideoJob, VideoJobStatus, VideoRequest } from '../media.js';
import { renderLocalVideo } from './local-video.js';

const FPS = 12;
const DEFAULT_SIZE = { width: 320, height: 180 };
const MAX_SIDE = 640;
const MAX_SECONDS = 10;
const DEFAULT_SECONDS = 4;
/** Rendered clips kept for repeated (Range) downloads. */
const CACHE_SIZE = 8;

/** What a local video job id encodes: the job is stateless, so any instance (or a restarted one) can serve it. */
interface LocalJob {
  /** Hash of the prompt: the clip's colours. */
  k: string;
  w: number;
  h: number;
  s: number;
  /** Submission time, ms since epoch. */
  t: number;
}

/**
 * The local video model. A job's status follows the clock: `queued` for the first fifth of
 * `renderMs`, then `in_progress` with progress growing, then `completed`; its content is a real
 * H.264 MP4 (see `local-video.ts`), served with Range support. Everything the job needs is in its
 * id, so several gateway instances sharing a task store, or a restarted one, serve it alike.
 */
export class LocalVideos {
  /** Clips rendered or being rendered: two downloads of one clip share its rendering. */
  private readonly cache = new Map<string, Promise<Uint8Array>>();

  constructor(
    private readonly renderMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  create(request: VideoRequest): VideoJob {
    for (const param of ['image', 'images'] as const) {
      if (request[param] !== undefined) {
        throw new GatewayError({
          status: 400,
          param,
          code: 'unsupported_parameter',
          message: `The local video model does not take reference images ('${param}').`,
        });
      }
    }
    const { width, height } = parseSize(request.size);
    const seconds = parseSeconds(request.seconds, request.duration);
    const job: LocalJob = { k: createHash('sha256').update(request.prompt).digest('hex').slice(0, 16), w: width, h: height, s: seconds, t: this.now() };
    return { id: `local-video-${Buffer.from(JSON.stringify(job)).toString('base64url')}` };
  }

  status(job: VideoJob): VideoJobStatus {
    const { t } = decode(job);
    const elapsed = this.now() - t;
    const queued = this.renderMs / 5;
    if (elapsed < queued) return { status: 'queued', progress: 0 };
    if (elapsed < this.renderMs) return { status: 'in_progress', progress: Math.floor(((elapsed - queued) / (this.renderMs - queued)) * 100) };
    return { status: 'completed', progress: 100, completedAt: Math.floor((t + this.renderMs) / 1000) };
  }

  async content(job: VideoJob, range: string | undefined): Promise<VideoContent> {
    const mp4 = await this.render(job);
    const size = mp4.length;
    const wanted = parseRange(range, size);
    if (wanted === 'unsatisfiable') {
      throw new GatewayError({
        status: 416,
        message: `The range ${range} is outside the video (${size} bytes).`,
        code: 'range_not_satisfiable',
        headers: { 'content-range': `bytes */${size}` },
      });
    }
    const { start, end } = wanted ?? { start: 0, end: size - 1 };
    return {
      status: wanted ? 206 : 200,
      headers: {
        'content-type': 'video/mp4',
        'content-length': String(end - start + 1),
        'accept-ranges': 'bytes',
        ...(wanted ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
      },
      body: chunks(mp4.subarray(start, end + 1)),
    };
  }

  private render(job: VideoJob): Promise<Uint8Array> {
    const cached = this.cache.get(job.id);
    if (cached) return cached;
    const { k, w, h, s } = decode(job);
    const mp4 = renderLocalVideo({ prompt: k, width: w, height: h, seconds: s, fps: FPS });
    setBounded(this.cache, job.id, mp4, CACHE_SIZE);
    // A rendering that failed is not kept.
    mp4.catch(() => this.cache.get(job.id) === mp4 && this.cache.delete(job.id));
    return mp4;
  }
}

async function* chunks(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.length; offset += 64 * 1024) yield bytes.subarray(offset, offset + 64 * 1024);
}

function decode(job: VideoJob): LocalJob {
  try {
    const parsed = JSON.parse(Buffer.from(job.id.replace(/^local-video-/, ''), 'base64url').toString('utf8')) as LocalJob;
    if (typeof parsed.t === 'number' && typeof parsed.k === 'string') return parsed;
  } catch {
    // Falls through to the 404.
  }
  throw new GatewayError({ status: 404, message: 'Unknown local video job.', code: 'task_not_found' });
}

/** `WIDTHxHEIGHT`, even numbers from 32 to 640; default 320x180. */
function parseSize(size: string | undefined): { width: number; height: number } {
  if (size === undefined) return DEFAULT_SIZE;
  const match = /^(\d{1,4})x(\d{1,4})$/.exec(size);
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (!match || width % 2 || height % 2 || width < 32 || height < 32 || width > MAX_SIDE || height > MAX_SIDE) {
    throw new GatewayError({
      status: 400,
      param: 'size',
      code: 'unsupported_value',
      message: `The local video model takes a 'size' of WIDTHxHEIGHT with even sides from 32 to ${MAX_SIDE}, received ${JSON.stringify(size)}.`,
    });
  }
  return { width, height };
}

/** `seconds` (number or numeric string) wins over `duration`; 1 to 10 seconds, default 4. */
function parseSeconds(seconds: number | string | undefined, duration: number | undefined): number {
  const param = seconds !== undefined ? 'seconds' : 'duration';
  const value = seconds ?? duration ?? DEFAULT_SECONDS;
  const n = typeof value === 'string' ? Number(value) : value;
  if (!Number.isInteger(n) || n < 1 || n > MAX_SECONDS) {
    throw new GatewayError({
      status: 400,
      param,
      code: 'unsupported_value',
      message: `The local video model makes clips of 1 to ${MAX_SECONDS} whole seconds: '${param}' was ${JSON.stringify(value)}.`,
    });
  }
  return n;
}
