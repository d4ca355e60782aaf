import { yieldToLoop } from '../../http/yield-to-loop.js';
import type { DecodedAudio } from './decoded-audio.js';

export type { DecodedAudio };

/** The containers read, in the words an error message uses. */
export const READABLE_AUDIO = 'WAV (PCM or float), MP3 and Ogg Opus';

/** MPEG data fed to mpg123 at a time (a quarter of its input buffer), the length checked after each. */
const MPEG_FEED_BYTES = 16 * 1024;

/**
 * Decodes an audio file by what its first bytes say it is: RIFF WAVE (read here), Ogg Opus
 * (libopus through `opusscript`) or MPEG audio (mpg123 through `mpg123-decoder`, WebAssembly).
 * The audio comes as it is decoded, in pieces of one channel (a packet, a feed of MPEG data, 64 Ki
 * WAV frames), never joined here, and the event loop turns between bounded runs of them. The
 * decoders are loaded on first use, so importing the gateway loads neither. Throws an `Error`
 * saying why for a file it cannot read, or whose audio runs past `maxSeconds`.
 */
export async function* decodeAudio(bytes: Uint8Array, maxSeconds: number): AsyncGenerator<DecodedAudio> {
  const head = String.fromCharCode(...bytes.subarray(0, 12));
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WAVE') yield* (await import('./wav-decode.js')).decodeWav(bytes, maxSeconds);
  else if (head.startsWith('OggS')) yield* (await import('./ogg-opus-decode.js')).decodeOggOpus(bytes, maxSeconds);
  else if (head.startsWith('ID3') || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) yield* decodeMpeg(bytes, maxSeconds);
  else throw new Error(`the file is none of ${READABLE_AUDIO}`);
}

async function* decodeMpeg(bytes: Uint8Array, maxSeconds: number): AsyncGenerator<DecodedAudio> {
  // Left to the runtime, not a host's bundler: mpg123-decoder also ships a Web Worker variant
  // whose dynamic imports Next.js (Turbopack) and webpack cannot resolve, which broke every route.
  const { MPEGDecoder }: typeof import('mpg123-decoder') = await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ 'mpg123-decoder');
  const decoder = new MPEGDecoder();
  await decoder.ready;
  let seconds = 0;
  try {
    for (let at = 0; at < bytes.length; at += MPEG_FEED_BYTES) {
      const decoded = decoder.decode(bytes.subarray(at, at + MPEG_FEED_BYTES));
      const channels = decoded.channelData.filter((channel) => channel.length > 0);
      if (decoded.samplesDecoded > 0 && channels.length > 0) {
        seconds += decoded.samplesDecoded / decoded.sampleRate;
        if (seconds > maxSeconds) throw new Error(`the audio is longer than ${maxSeconds} seconds`);
        // A copy: the decoder reuses its output buffers.
        yield { samples: mixDown(channels, decoded.samplesDecoded), sampleRate: decoded.sampleRate };
      }
      await yieldToLoop();
    }
  } finally {
    decoder.free();
  }
  if (seconds === 0) throw new Error('no MPEG audio frame could be decoded');
}

/** One channel: the mean of the channels, in a new array. */
function mixDown(channels: readonly Float32Array[], length: number): Float32Array {
  if (channels.length === 1) return channels[0]!.slice(0, length);
  const samples = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    let sum = 0;
    for (const channel of channels) sum += channel[i] ?? 0;
    samples[i] = sum / channels.length;
  }
  return samples;
}
