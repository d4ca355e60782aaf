import type { DecodedAudio } from './decoded-audio.js';

export type { DecodedAudio };

/** The containers read, in the words an error message uses. */
export const READABLE_AUDIO = 'WAV (PCM or float), MP3 and Ogg Opus';

/**
 * Decodes an audio file by what its first bytes say it is: RIFF WAVE (read here), Ogg Opus
 * (libopus through `opusscript`) or MPEG audio (mpg123 through `mpg123-decoder`, WebAssembly).
 * The decoders are loaded on first use, so importing the gateway loads neither. Throws an
 * `Error` saying why for a file it cannot read.
 */
export async function decodeAudio(bytes: Uint8Array): Promise<DecodedAudio> {
  const head = String.fromCharCode(...bytes.subarray(0, 12));
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WAVE') return (await import('./wav-decode.js')).decodeWav(bytes);
  if (head.startsWith('OggS')) return (await import('./ogg-opus-decode.js')).decodeOggOpus(bytes);
  if (head.startsWith('ID3') || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) return decodeMpeg(bytes);
  throw new Error(`the file is none of ${READABLE_AUDIO}`);
}

async function decodeMpeg(bytes: Uint8Array): Promise<DecodedAudio> {
  // Left to the runtime, not a host's bundler: mpg123-decoder also ships a Web Worker variant
  // whose dynamic imports Next.js (Turbopack) and webpack cannot resolve, which broke every route.
  const { MPEGDecoder }: typeof import('mpg123-decoder') = await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ 'mpg123-decoder');
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const decoded = decoder.decode(bytes);
    const channels = decoded.channelData.filter((channel) => channel.length > 0);
    if (decoded.samplesDecoded === 0 || channels.length === 0) throw new Error('no MPEG audio frame could be decoded');
    if (channels.length === 1) return { samples: channels[0]!.subarray(0, decoded.samplesDecoded), sampleRate: decoded.sampleRate };
    const samples = new Float32Array(decoded.samplesDecoded);
    for (let i = 0; i < samples.length; i++) {
      let sum = 0;
      for (const channel of channels) sum += channel[i] ?? 0;
      samples[i] = sum / channels.length;
    }
    return { samples, sampleRate: decoded.sampleRate };
  } finally {
    decoder.free();
  }
}
