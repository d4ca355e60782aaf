import type { IRStreamEvent } from '../protocols/ir.js';
import { escapeEndAt, isHighSurrogate } from './mask.js';

export type WindowKind = 'text' | 'refusal' | 'arguments';

export interface WindowOptions {
  /** Characters held back at the end of the pending text (longest local finding); 0 for none. */
  holdChars: number;
  /** Characters gathered before a window is released (remote checkers); 0: release as soon as beyond holdChars. */
  windowChars: number;
  /** Prefer cutting a window at a sentence end or newline within the last part of the window. */
  sentences: boolean;
  /**
   * Where a value longer than `holdChars` may have begun and still be growing at the end of the
   * pending text (a PEM block, a JWT), or -1: nothing from there is released until it is whole.
   */
  holdFrom?: ((text: string) => number) | undefined;
  /** Local findings of the pending text, so a cut never falls inside one (the cut moves past a finding that straddles it). */
  scan?: ((text: string) => readonly { start: number; end: number }[]) | undefined;
  /** Checks and masks one released window; throws a GatewayError to block. `kind`: which part of the answer. */
  release(window: string, kind: WindowKind): string | Promise<string>;
}

/** How far back from the planned cut a sentence end or a space is looked for, at least. */
const BOUNDARY_REACH = 64;

/** How much text beyond the hold waits for a space before a window is cut anyway. */
const FORCED_CUT = 1024;

/**
 * The stream with its text, refusal and tool-call arguments held and released in windows, each
 * through `options.release`, so a checker sees a value whole and the client never sees it before
 * it was checked. A run of deltas of one kind is held until an event of another type (or another
 * `tool_call_start`) ends it: the rest of the run is then released before that event passes.
 * While a run goes on, what lies beyond the last `holdChars` characters is released in windows of
 * `windowChars` (when 0: once it is an eighth of `holdChars` long), cut after a space or a
 * sentence end when one is near (a window with no space near waits for one, up to 1,024
 * characters), never inside a finding of `scan`, a JSON escape or a surrogate pair. Windows so cut
 * read as the whole text does, so masking each gives the whole text masked (a property test
 * checks it over random chunkings). `usage` events pass at once
 * without ending a run: they only update counters, and a value split around one would otherwise
 * go out in two unchecked halves. A release that throws ends the stream with that error, after
 * the events before it, and closes the source; so does the consumer's `return()`. A failure of
 * the source passes on as it is; the text held then is dropped, never released unchecked.
 */
export function windowedStream(batches: AsyncIterable<readonly IRStreamEvent[]>, options: WindowOptions): AsyncIterable<readonly IRStreamEvent[]> {
  return releaseInWindows(batches, options);
}

async function* releaseInWindows(batches: AsyncIterable<readonly IRStreamEvent[]>, options: WindowOptions): AsyncGenerator<readonly IRStreamEvent[]> {
  let kind: WindowKind | undefined;
  let pending = '';

  /**
   * Releases `window` of the open run into `out` (a delta of the run's kind, unless empty). A
   * synchronous release is pushed at once and returns nothing to await: no promise per window.
   */
  const release = (window: string, out: IRStreamEvent[]): Promise<void> | undefined => {
    const runKind = kind!;
    const released = options.release(window, runKind);
    if (typeof released === 'string') {
      if (released !== '') out.push(deltaOf(runKind, released));
      return undefined;
    }
    return released.then((text) => {
      if (text !== '') out.push(deltaOf(runKind, text));
    });
  };

  for await (const batch of batches) {
    const out: IRStreamEvent[] = [];
    let failure: { error: unknown } | undefined;
    try {
      for (const event of batch) {
        const eventKind = windowKindOf(event);
        if (eventKind === undefined && event.type === 'usage') {
          out.push(event);
          continue;
        }
        if (eventKind !== kind && pending !== '') {
          const whole = pending;
          pending = '';
          const releasing = release(whole, out);
          if (releasing !== undefined) await releasing;
        }
        if (eventKind === undefined) out.push(event);
        else pending += deltaText(event);
        kind = eventKind;
      }
      // Then the windows the batch completed, scanning the pending text once.
      let findings: readonly { start: number; end: number }[] | undefined;
      for (let cut = plannedCut(pending, options); cut > 0; cut = plannedCut(pending, options)) {
        findings ??= options.scan?.(pending) ?? [];
        cut = safeCut(pending, cut, findings);
        const window = pending.slice(0, cut);
        pending = pending.slice(cut);
        findings = shifted(findings, cut);
        const releasing = release(window, out);
        if (releasing !== undefined) await releasing;
      }
    } catch (error) {
      failure = { error };
    }
    if (out.length > 0) yield out;
    // Thrown here, inside the loop, the error closes the source.
    if (failure !== undefined) throw failure.error;
  }
  if (pending === '') return;
  const out: IRStreamEvent[] = [];
  const releasing = release(pending, out);
  if (releasing !== undefined) await releasing;
  pending = '';
  if (out.length > 0) yield out;
}

function windowKindOf(event: IRStreamEvent): WindowKind | undefined {
  switch (event.type) {
    case 'text_delta':
      return 'text';
    case 'refusal_delta':
      return 'refusal';
    case 'tool_call_delta':
      return 'arguments';
    default:
      return undefined;
  }
}

function deltaText(event: IRStreamEvent): string {
  return event.type === 'tool_call_delta' ? event.arguments : (event as { text: string }).text;
}

function deltaOf(kind: WindowKind, text: string): IRStreamEvent {
  if (kind === 'arguments') return { type: 'tool_call_delta', arguments: text };
  return { type: kind === 'text' ? 'text_delta' : 'refusal_delta', text };
}

/** Where the next window would end, before adjusting it to the text: 0 when no window is ready. */
function plannedCut(text: string, options: WindowOptions): number {
  const open = options.holdFrom?.(text) ?? -1;
  const limit = open >= 0 ? Math.min(open, text.length - options.holdChars) : text.length - options.holdChars;
  // Without windowChars, wait for an eighth of holdChars beyond it: each scan reads the whole
  // pending text, so releasing on every small batch would read it again per token.
  const least = options.windowChars > 0 ? options.windowChars : Math.ceil(options.holdChars / 8);
  if (limit <= 0 || limit < least) return 0;
  const target = options.windowChars > 0 ? options.windowChars : limit;
  const reach = Math.min(target - 1, Math.max(BOUNDARY_REACH, options.windowChars >> 2));
  if (options.sentences) {
    const sentence = lastBoundary(text, target, reach, isSentenceEnd);
    if (sentence > 0) return sentence;
  }
  const space = lastBoundary(text, target, Math.min(reach, BOUNDARY_REACH), isAfterSpace);
  if (space > 0) return space;
  // No space near: a window starting mid-word could read a local value the whole text does not
  // have (or miss one), so wait for more text, up to a bound, unless windows have a fixed size.
  return options.windowChars > 0 || options.holdChars === 0 || limit >= least + FORCED_CUT ? target : 0;
}

function lastBoundary(text: string, from: number, reach: number, test: (text: string, at: number) => boolean): number {
  for (let at = from; at >= from - reach && at > 0; at--) if (test(text, at)) return at;
  return 0;
}

/**
 * After a space, where the next window reads as it does in the whole text: a detector looks one
 * character back (the space), and phone and card patterns two (a digit before the space means the
 * number goes on), so not after a space that follows a digit.
 */
function isAfterSpace(text: string, at: number): boolean {
  const code = text.charCodeAt(at - 1);
  if (code !== 0x20 && code !== 0x0a && code !== 0x09 && code !== 0x0d) return false;
  const before = text.charCodeAt(at - 2);
  return !(before >= 0x30 && before <= 0x39);
}

function isSentenceEnd(text: string, at: number): boolean {
  const before = text[at - 1];
  if (before === '\n' || before === '。' || before === '！' || before === '？') return true;
  return (before === ' ' || before === '\t') && /[.!?…]/.test(text[at - 2] ?? '');
}

/**
 * The planned cut moved forward until it splits nothing a mask would take whole: past any finding
 * that straddles it, past an escape sequence (JSON-escaped arguments) or a surrogate pair.
 */
function safeCut(text: string, planned: number, findings: readonly { start: number; end: number }[]): number {
  let cut = planned;
  for (let moved = true; moved; ) {
    moved = false;
    for (const finding of findings) {
      if (finding.start < cut && finding.end > cut) {
        cut = finding.end;
        moved = true;
      }
    }
    const afterEscape = escapeEndAt(text, cut);
    if (afterEscape > cut) {
      cut = afterEscape;
      moved = true;
    }
    if (isHighSurrogate(text.charCodeAt(cut - 1)) && cut < text.length) {
      cut++;
      moved = true;
    }
  }
  return cut;
}

function shifted(findings: readonly { start: number; end: number }[], cut: number): readonly { start: number; end: number }[] {
  const rest: { start: number; end: number }[] = [];
  for (const finding of findings) if (finding.start >= cut) rest.push({ start: finding.start - cut, end: finding.end - cut });
  return rest;
}
