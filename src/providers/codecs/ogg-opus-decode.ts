import OpusScript from 'opusscript';
import { yieldToLoop } from '../../http/yield-to-loop.js';
import type { DecodedAudio } from './decoded-audio.js';
import { OPUS_RATE, oggCrc } from './ogg-opus.js';

/** The longest Opus frame, 120 ms at 48 kHz: what one packet can decode to. */
const MAX_PACKET_SAMPLES = 5760;

/** Packets decoded between two turns of the event loop (about 2 s of audio, a few ms of work). */
const PACKETS_PER_TURN = 32;

/**
 * Reads an Ogg Opus file (RFC 7845): the Ogg pages of the first logical stream (CRC checked),
 * their packets joined across pages, `OpusHead` for the channel count and pre-skip, then every
 * audio packet decoded by libopus (`opusscript`) as it is read, mixed down to one channel at
 * 48 kHz, and handed on as a piece of its own (the event loop turns every `PACKETS_PER_TURN`).
 * The pre-skip is dropped and the end trimmed to the last granule position (read from the page
 * headers first), so the length is the length that was encoded. Audio longer than `maxSeconds`
 * stops the decode: a small file of tiny packets stands for days of samples. Throws an `Error`
 * saying what is wrong for anything else (Ogg Vorbis or FLAC included).
 */
export async function* decodeOggOpus(bytes: Uint8Array, maxSeconds: number): AsyncGenerator<DecodedAudio> {
  const packets = oggPackets(bytes);
  const head = packets.next().value;
  if (!head) throw new Error('not an Ogg file');
  if (String.fromCharCode(...head.subarray(0, 8)) !== 'OpusHead') throw new Error('the Ogg stream is not Opus (only Ogg Opus is read)');
  const channels = head[9]!;
  const preSkip = head[10]! | (head[11]! << 8);
  if (channels < 1 || channels > 2) throw new Error(`Ogg Opus with ${channels} channels is not read (mono or stereo only)`);
  const lastGranule = lastGranuleOf(bytes);
  const end = lastGranule !== undefined && lastGranule > preSkip ? lastGranule : Infinity;
  const opus = new OpusScript(OPUS_RATE, channels as 1 | 2, OpusScript.Application.AUDIO);
  /** Samples decoded so far, the pre-skip included. */
  let total = 0;
  let packetCount = 0;
  const maxSamples = maxSeconds * OPUS_RATE;
  try {
    // The packet after the head is OpusTags.
    packets.next();
    for (const packet of packets) {
      if (packet.length === 0) continue;
      let pcm: Buffer;
      try {
        pcm = opus.decode(Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
      } catch (error) {
        throw new Error(`an Opus packet could not be decoded (${(error as Error).message})`);
      }
      const frames = Math.min(MAX_PACKET_SAMPLES, Math.floor(pcm.length / (2 * channels)));
      // The frames of this packet that are audio: after the pre-skip, before the end.
      const from = Math.max(0, preSkip - total);
      const to = Math.min(frames, end - total);
      total += frames;
      if (total - preSkip > maxSamples) throw new Error(`the audio is longer than ${maxSeconds} seconds`);
      if (to > from) {
        const mono = new Float32Array(to - from);
        for (let frame = from; frame < to; frame++) {
          let sum = 0;
          for (let channel = 0; channel < channels; channel++) sum += pcm.readInt16LE((frame * channels + channel) * 2);
          mono[frame - from] = sum / channels / 32768;
        }
        yield { samples: mono, sampleRate: OPUS_RATE };
      }
      if (++packetCount % PACKETS_PER_TURN === 0) await yieldToLoop();
    }
  } finally {
    opus.delete();
  }
}

/** An Ogg page's header fields, and where its body and lacing values are. */
interface OggPage {
  offset: number;
  end: number;
  serial: number;
  granule: number;
  lacing: Uint8Array;
  bodyStart: number;
}

/** The whole pages of `bytes`, headers only (no CRC check); stops at a page cut short or at bytes that are no page. */
function* oggPages(bytes: Uint8Array): Generator<OggPage> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  while (offset + 27 <= bytes.length) {
    if (String.fromCharCode(...bytes.subarray(offset, offset + 4)) !== 'OggS') throw new Error(`no Ogg page at byte ${offset}`);
    const segments = bytes[offset + 26]!;
    const lacing = bytes.subarray(offset + 27, offset + 27 + segments);
    const bodyStart = offset + 27 + segments;
    const end = bodyStart + lacing.reduce((sum, value) => sum + value, 0);
    // A file cut short (an upload that stopped) is read up to its last whole page.
    if (end > bytes.length) return;
    yield { offset, end, serial: view.getUint32(offset + 14, true), granule: Number(view.getBigInt64(offset + 6, true)), lacing, bodyStart };
    offset = end;
  }
}

/** The last granule position of the first logical stream: where its audio ends. */
function lastGranuleOf(bytes: Uint8Array): number | undefined {
  let serial: number | undefined;
  let last: number | undefined;
  for (const page of oggPages(bytes)) {
    serial ??= page.serial;
    if (page.serial === serial && page.granule >= 0) last = page.granule;
  }
  return last;
}

/** The packets of the first logical stream, in order, as its pages are read (each page's CRC checked). */
function* oggPackets(bytes: Uint8Array): Generator<Uint8Array, void, undefined> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let partial: Uint8Array[] = [];
  let serial: number | undefined;
  for (const { offset, end, serial: pageSerial, lacing, bodyStart } of oggPages(bytes)) {
    // A copy (a Buffer's `slice` is a view): the CRC field is zeroed in it to check the page.
    const page = new Uint8Array(bytes.subarray(offset, end));
    const crc = view.getUint32(offset + 22, true);
    page.fill(0, 22, 26);
    if (oggCrc(page) !== crc) throw new Error(`the Ogg page at byte ${offset} fails its CRC check`);
    serial ??= pageSerial;
    if (pageSerial !== serial) continue;
    let start = bodyStart;
    for (const value of lacing) {
      partial.push(bytes.subarray(start, start + value));
      start += value;
      // A lacing value under 255 ends a packet; 255 continues it (on the next page too).
      if (value < 255) {
        yield partial.length === 1 ? partial[0]! : concat(partial);
        partial = [];
      }
    }
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
