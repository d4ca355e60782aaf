import { encodePng } from '../../src/providers/codecs/png.js';
import { pcmBytes, wavHeader } from '../../src/providers/codecs/wav.js';
import type { FixtureName } from './cases.js';

const SIDE = 16;

/** A 16×16 picture: small enough that the local model edits it in microseconds. */
function picture(alpha: (x: number, y: number) => number): Uint8Array {
  const pixels = new Uint8Array(SIDE * SIDE * 4);
  for (let y = 0; y < SIDE; y++) {
    for (let x = 0; x < SIDE; x++) {
      const p = (y * SIDE + x) * 4;
      pixels.set([x * 16, y * 16, 128, alpha(x, y)], p);
    }
  }
  return encodePng({ width: SIDE, height: SIDE, pixels });
}

/** Two hummed words at 8 kHz (0.2 s and 0.3 s of 200 Hz, 70 ms apart): a transcription in microseconds. */
function hum(): Uint8Array {
  const rate = 8000;
  const samples = new Int16Array(Math.round(0.6 * rate));
  for (let i = 0; i < samples.length; i++) {
    const t = i / rate;
    const voiced = t < 0.2 || (t >= 0.27 && t < 0.57);
    samples[i] = voiced ? Math.round(8000 * Math.sin(2 * Math.PI * 200 * t)) : 0;
  }
  const pcm = pcmBytes(samples);
  const out = new Uint8Array(44 + pcm.length);
  out.set(wavHeader(rate, 1, pcm.length));
  out.set(pcm, 44);
  return out;
}

/** The files a case can upload, by name (`{ "fixture": "png16" }` in a body piece). */
export const fixtures: Record<FixtureName, Uint8Array> = {
  png16: picture(() => 255),
  // Transparent on the left half: the part the edit may change.
  mask16: picture((x) => (x < SIDE / 2 ? 0 : 255)),
  notPng: new TextEncoder().encode('GIF89a this is not a PNG file at all'),
  wav: hum(),
};
