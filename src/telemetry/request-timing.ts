import type { UpstreamWait } from '../providers/http/upstream-client.js';

/**
 * The gateway's own time for one request (its overhead), with metrics on: from the request
 * reaching the gateway until its answer is ready (a whole answer built, or a stream's headers),
 * less the time it waited on upstreams (each call from sending it to its response headers; an
 * answer read whole, while it was read; a translated stream, until its first events) and on
 * retry back-off. Two clock reads per upstream call and one per request: nothing per chunk.
 */
export class RequestTiming implements UpstreamWait {
  private readonly receivedAt = performance.now();
  private waitedMs = 0;
  /** An upstream was called, and whether it told its wait (a custom provider may not). */
  private calledUpstream = false;
  private toldWait = false;
  private overheadMs: number | undefined;

  /** An upstream attempt starts. */
  callingUpstream(): void {
    this.calledUpstream = true;
  }

  waited(ms: number): void {
    this.waitedMs += ms;
    this.toldWait = true;
  }

  /**
   * The overhead in ms, taken the first time it is asked for: when the answer is ready.
   * Unknown (undefined) when an upstream was called that did not tell its wait.
   */
  answered(): number | undefined {
    if (this.calledUpstream && !this.toldWait) return undefined;
    this.overheadMs ??= Math.max(0, performance.now() - this.receivedAt - this.waitedMs);
    return this.overheadMs;
  }
}
