import { createHash } from 'node:crypto';

export type Rgb = readonly [number, number, number];

/** Deterministic bytes from a text: the same prompt always draws the same picture. */
export function seedBytes(text: string): Uint8Array {
  return createHash('sha256').update(text).digest();
}

/** Three colours picked from the seed: two for the background gradient, one for the subject. */
export function paletteOf(seed: Uint8Array): { from: Rgb; to: Rgb; accent: Rgb } {
  const hue = (seed[0]! / 255) * 360;
  return {
    from: hsl(hue, 0.55, 0.25),
    to: hsl((hue + 40 + (seed[1]! % 60)) % 360, 0.6, 0.55),
    accent: hsl((hue + 180) % 360, 0.8, 0.6),
  };
}

/** Linear blend of two colours, `t` in 0..1. */
export function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

function hsl(h: number, s: number, l: number): Rgb {
  const c = (1 - Math.abs(2 * l - 1)) * s;
  const x = c * (1 - Math.abs(((h / 60) % 2) - 1));
  const m = l - c / 2;
  const [r, g, b] = h < 60 ? [c, x, 0] : h < 120 ? [x, c, 0] : h < 180 ? [0, c, x] : h < 240 ? [0, x, c] : h < 300 ? [x, 0, c] : [c, 0, x];
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}
