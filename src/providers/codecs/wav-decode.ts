import { yieldToLoop } from '../../http/yield-to-loop.js';
import type { DecodedAudio } from './decoded-audio.js';

const PCM = 1;
const FLOAT = 3;
const EXTENSIBLE = 0xfffe;
/** Frames mixed down per piece, between two turns of the event loop. */
const PIECE_FRAMES = 64 * 1024;

/**
 * Reads a RIFF WAVE file: integer PCM of 8, 16, 24 or 32 bits, or 32/64-bit float, any number of
 * channels (mixed down to one), the `WAVE_FORMAT_EXTENSIBLE` header included. A data chunk whose
 * size is unknown (0xFFFFFFFF, as streamed WAV has it) or past the end runs to the end of the file.
 * Throws an `Error` saying what is wrong for anything else, audio longer than `maxSeconds` included.
 * The samples come in pieces of `PIECE_FRAMES`.
 */
export async function* decodeWav(bytes: Uint8Array, maxSeconds: number): AsyncGenerator<DecodedAudio> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new Error('not a RIFF WAVE file');
  let format: { tag: number; channels: number; sampleRate: number; bits: number } | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.length) throw new Error('the fmt chunk is cut short');
      let formatTag = view.getUint16(body, true);
      // WAVE_FORMAT_EXTENSIBLE names the real format in the first two bytes of its sub-format GUID.
      if (formatTag === EXTENSIBLE && size >= 40 && body + 26 <= bytes.length) formatTag = view.getUint16(body + 24, true);
      format = { tag: formatTag, channels: view.getUint16(body + 2, true), sampleRate: view.getUint32(body + 4, true), bits: view.getUint16(body + 14, true) };
    } else if (id === 'data') {
      if (!format) throw new Error('the data chunk comes before any fmt chunk');
      const end = size === 0xffffffff || body + size > bytes.length ? bytes.length : body + size;
      yield* toMono(view, body, end, format, maxSeconds);
      return;
    }
    // Chunks are padded to an even length.
    offset = body + size + (size % 2);
  }
  throw new Error('the file has no data chunk');
}

async function* toMono(
  view: DataView,
  start: number,
  end: number,
  format: { tag: number; channels: number; sampleRate: number; bits: number },
  maxSeconds: number,
): AsyncGenerator<DecodedAudio> {
  const { tag, channels, sampleRate, bits } = format;
  if (channels < 1 || sampleRate < 1000 || sampleRate > 384_000) throw new Error(`unreadable format: ${channels} channels at ${sampleRate} Hz`);
  const read = sampleReader(view, tag, bits);
  const width = bits / 8;
  const frames = Math.floor((end - start) / (width * channels));
  if (frames > maxSeconds * sampleRate) throw new Error(`the audio is longer than ${maxSeconds} seconds`);
  for (let first = 0, at = start; first < frames; first += PIECE_FRAMES) {
    const out = new Float32Array(Math.min(PIECE_FRAMES, frames - first));
    for (let frame = 0; frame < out.length; frame++) {
      let sum = 0;
      for (let channel = 0; channel < channels; channel++, at += width) {
        const value = read(at);
        // Float files may hold NaN or infinities; they are no sound.
        if (Number.isFinite(value)) sum += value;
      }
      out[frame] = sum / channels;
    }
    yield { samples: out, sampleRate };
    await yieldToLoop();
  }
}

/** A reader of one sample at a byte offset, scaled to -1..1. */
function sampleReader(view: DataView, tag: number, bits: number): (at: number) => number {
  if (tag === PCM && bits === 16) return (at) => view.getInt16(at, true) / 32768;
  if (tag === PCM && bits === 8) return (at) => (view.getUint8(at) - 128) / 128;
  if (tag === PCM && bits === 24) return (at) => (view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getInt8(at + 2) << 16)) / 8388608;
  if (tag === PCM && bits === 32) return (at) => view.getInt32(at, true) / 2147483648;
  if (tag === FLOAT && bits === 32) return (at) => view.getFloat32(at, true);
  if (tag === FLOAT && bits === 64) return (at) => view.getFloat64(at, true);
  throw new Error(`unsupported WAV encoding (format ${tag}, ${bits} bits): PCM of 8 to 32 bits or float is read`);
}
