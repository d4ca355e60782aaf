import type { DecodedAudio } from './decoded-audio.js';

export type { DecodedAudio };

/** The containers read, in the words an error message uses. */
export const READABLE_AUDIO = 'WAV (PCM or float), MP3 and Ogg Opus';

/**
 * The longest audio decoded: its samples are held at once (at 48 kHz, 15 minutes are 173 MB),
 * and a small compressed file can stand for days of them.
 */
export const MAX_AUDIO_SECONDS = 15 * 60;

/** MPEG data fed to mpg123 at a time (its own input buffer's size), the length checked after each. */
const MPEG_FEED_BYTES = 64 * 1024;

/**
 * Decodes an audio file by what its first bytes say it is: RIFF WAVE (read here), Ogg Opus
 * (libopus through `opusscript`) or MPEG audio (mpg123 through `mpg123-decoder`, WebAssembly).
 * The decoders are loaded on first use, so importing the gateway loads neither. Throws an
 * `Error` saying why for a file it cannot read, or whose audio runs past `maxSeconds`.
 */
export async function decodeAudio(bytes: Uint8Array, maxSeconds = MAX_AUDIO_SECONDS): Promise<DecodedAudio> {
  const head = String.fromCharCode(...bytes.subarray(0, 12));
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WAVE') return (await import('./wav-decode.js')).decodeWav(bytes, maxSeconds);
  if (head.startsWith('OggS')) return (await import('./ogg-opus-decode.js')).decodeOggOpus(bytes, maxSeconds);
  if (head.startsWith('ID3') || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return decodeMpeg(bytes, maxSeconds);
  throw new Error(`the file is none of ${READABLE_AUDIO}`);
}

async function decodeMpeg(bytes: Uint8Array, maxSeconds: number): Promise<DecodedAudio> {
  // Left to the runtime, not a host's bundler: mpg123-decoder also ships a Web Worker variant
  // whose dynamic imports Next.js (Turbopack) and webpack cannot resolve, which broke every route.
  const { MPEGDecoder }: typeof import('mpg123-decoder') = await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ 'mpg123-decoder');
  const decoder = new MPEGDecoder();
  await decoder.ready;
  const pieces: Float32Array[] = [];
  let total = 0;
  let sampleRate = 0;
  try {
    for (let at = 0; at < bytes.length; at += MPEG_FEED_BYTES) {
      const decoded = decoder.decode(bytes.subarray(at, at + MPEG_FEED_BYTES));
      const channels = decoded.channelData.filter((channel) => channel.length > 0);
      if (decoded.samplesDecoded === 0 || channels.length === 0) continue;
      pieces.push(mixDown(channels, decoded.samplesDecoded));
      total += decoded.samplesDecoded;
      sampleRate = decoded.sampleRate;
      if (total > maxSeconds * sampleRate) throw new Error(`the audio is longer than ${maxSeconds} seconds`);
    }
  } finally {
    decoder.free();
  }
  if (total === 0) throw new Error('no MPEG audio frame could be decoded');
  if (pieces.length === 1) return { samples: pieces[0]!, sampleRate };
  const samples = new Float32Array(total);
  let at = 0;
  for (const piece of pieces) {
    samples.set(piece, at);
    at += piece.length;
  }
  return { samples, sampleRate };
}

/** One channel: the only one as it is, or the mean of several. */
function mixDown(channels: readonly Float32Array[], length: number): Float32Array {
  if (channels.length === 1) return channels[0]!.subarray(0, length);
  const samples = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    let sum = 0;
    for (const channel of channels) sum += channel[i] ?? 0;
    samples[i] = sum / channels.length;
  }
  return samples;
}
