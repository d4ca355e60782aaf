import { encodePng } from '../../src/providers/codecs/png.js';
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

/** The files a case can upload, by name (`{ "fixture": "png16" }` in a body piece). */
export const fixtures: Record<FixtureName, Uint8Array> = {
  png16: picture(() => 255),
  // Transparent on the left half: the part the edit may change.
  mask16: picture((x) => (x < SIDE / 2 ? 0 : 255)),
  notPng: new TextEncoder().encode('GIF89a this is not a PNG file at all'),
};
