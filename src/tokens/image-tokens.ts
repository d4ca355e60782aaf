import { pngSize } from '../providers/codecs/png.js';
import type { IRImagePart } from '../protocols/ir.js';

/** Whose documented image formula applies: the upstream model's vendor. */
export type ImageFormula = 'openai' | 'anthropic';

/**
 * Tokens an image costs as input, by its vendor's documented formula when its size can be read
 * (base64 data or a data URL of a PNG, JPEG, GIF or WebP), else a documented constant:
 * - OpenAI (GPT-4o, GPT-4.1, GPT-5, o-series): `detail: "low"` costs 85; otherwise the image is
 *   fitted within 2048×2048, then its short side scaled down to 768, and each 512-px tile costs
 *   170 more than the base 85. Unknown size: 765, a 1024×1024 image.
 * - Anthropic: width × height / 750, after an image longer than 1568 px on its long side is
 *   scaled down to it. Unknown size: 1600, about the largest image that is not scaled.
 */
export function imageTokens(image: IRImagePart, formula: ImageFormula): number {
  const size = imageSize(image);
  if (formula === 'anthropic') return size ? anthropicImageTokens(size.width, size.height) : 1600;
  if (image.detail === 'low') return 85;
  return size ? openAIImageTokens(size.width, size.height) : 765;
}

export function openAIImageTokens(width: number, height: number): number {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const shorter = Math.min(1, 768 / Math.min(w, h));
  w *= shorter;
  h *= shorter;
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

export function anthropicImageTokens(width: number, height: number): number {
  const scale = Math.min(1, 1568 / Math.max(width, height));
  return Math.ceil((width * scale * (height * scale)) / 750);
}

/** Enough of the start of a file for its size: JPEG's frame header can follow tens of KB of metadata. */
const HEADER_BYTES = 192 * 1024;

interface Size {
  width: number;
  height: number;
}

function imageSize(image: IRImagePart): Size | undefined {
  let data = image.data;
  if (data === undefined && image.url?.startsWith('data:')) data = image.url.slice(image.url.indexOf(',') + 1);
  if (!data) return undefined;
  // Only the header is decoded (base64 length rounded down to whole 4-character groups).
  const head = Buffer.from(data.slice(0, Math.floor((HEADER_BYTES * 4) / 3 / 4) * 4), 'base64');
  const size = pngSize(head) ?? gifSize(head) ?? jpegSize(head) ?? webpSize(head);
  return size && size.width > 0 && size.height > 0 ? size : undefined;
}

function gifSize(bytes: Buffer): Size | undefined {
  if (bytes.length < 10 || bytes.toString('latin1', 0, 4) !== 'GIF8') return undefined;
  return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
}

/** Walks the JPEG segments to the first start-of-frame marker. */
function jpegSize(bytes: Buffer): Size | undefined {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    // SOF0–SOF15, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}

function webpSize(bytes: Buffer): Size | undefined {
  if (bytes.length < 30 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WEBP') return undefined;
  const chunk = bytes.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  if (chunk === 'VP8 ') return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = bytes.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
  }
  return undefined;
}
