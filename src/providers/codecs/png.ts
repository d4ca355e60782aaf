import { crc32, deflateSync, inflateSync } from 'node:zlib';

/** An 8-bit RGBA picture, rows top to bottom. */
export interface RgbaImage {
  width: number;
  height: number;
  /** width × height × 4 bytes. */
  pixels: Uint8Array;
}

const SIGNATURE = Uint8Array.from([137, 80, 78, 71, 13, 10, 26, 10]);

/** Encodes an RGBA picture as an 8-bit truecolour-with-alpha PNG (Sub filter on every row). */
export function encodePng(image: RgbaImage): Uint8Array {
  const { width, height, pixels } = image;
  const stride = width * 4;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (stride + 1);
    raw[row] = 1; // Sub: each byte minus the same channel of the pixel to its left
    for (let x = 0; x < stride; x++) {
      const value = pixels[y * stride + x]!;
      raw[row + 1 + x] = x < 4 ? value : (value - pixels[y * stride + x - 4]!) & 0xff;
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8); // bit depth 8, colour type 6 (RGBA), deflate, adaptive filters, no interlace
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 6 })), chunk('IEND', Buffer.alloc(0))]);
}

/** Width and height from a PNG's header, or undefined when `bytes` is not a PNG. */
export function pngSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  if (bytes.length < 24 || !SIGNATURE.every((byte, i) => bytes[i] === byte)) return undefined;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
}

/**
 * Decodes a non-interlaced 8-bit PNG (grey, grey+alpha, RGB, RGBA or palette) to RGBA; throws a
 * `RangeError` naming what it cannot read. CRCs are checked. A width or height over `maxSide` is
 * refused from the header, before anything is inflated: a few hundred KB of zlib can declare
 * gigabytes of pixels.
 */
export function decodePng(bytes: Uint8Array, { maxSide }: { maxSide: number }): RgbaImage {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!pngSize(data)) throw new RangeError('not a PNG file');
  let offset = 8;
  let width = 0;
  let height = 0;
  let colorType = 0;
  let palette: Buffer | undefined;
  let transparency: Buffer | undefined;
  const idat: Buffer[] = [];
  while (offset + 12 <= data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (body.length !== length) throw new RangeError('truncated PNG chunk');
    if (crc32(data.subarray(offset + 4, offset + 8 + length)) !== data.readUInt32BE(offset + 8 + length)) {
      throw new RangeError(`bad CRC in the ${type} chunk`);
    }
    if (type === 'IHDR') {
      // Only the first chunk may be the header: a second one must not change the size checked here.
      if (offset !== 8) throw new RangeError('IHDR is not the first chunk');
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (width === 0 || height === 0) throw new RangeError(`unsupported size ${width}x${height}`);
      if (width > maxSide || height > maxSide) throw new RangeError(`${width}x${height} is larger than ${maxSide} pixels a side`);
      colorType = body[9]!;
      if (body[8] !== 8) throw new RangeError(`bit depth ${body[8]} is not supported (8 only)`);
      if (body[12] !== 0) throw new RangeError('interlaced PNGs are not supported');
    } else if (type === 'PLTE') palette = body;
    else if (type === 'tRNS') transparency = body;
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  const channels = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[colorType];
  if (channels === undefined) throw new RangeError(`colour type ${colorType} is not supported`);
  if (colorType === 3 && !palette) throw new RangeError('palette PNG without a PLTE chunk');

  const stride = width * channels;
  // Capped at what the header promises (at most `maxSide`² pixels): extra data is not inflated.
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(idat), { maxOutputLength: (stride + 1) * height });
  } catch (error) {
    throw new RangeError(`bad image data: ${(error as Error).message}`);
  }
  if (raw.length < (stride + 1) * height) throw new RangeError('truncated image data');
  const samples = unfilter(raw, width, height, channels);
  const pixels = new Uint8Array(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const s = i * channels;
    const p = i * 4;
    if (colorType === 0 || colorType === 4) {
      pixels[p] = pixels[p + 1] = pixels[p + 2] = samples[s]!;
      pixels[p + 3] = colorType === 4 ? samples[s + 1]! : 255;
    } else if (colorType === 3) {
      const index = samples[s]!;
      pixels[p] = palette![index * 3] ?? 0;
      pixels[p + 1] = palette![index * 3 + 1] ?? 0;
      pixels[p + 2] = palette![index * 3 + 2] ?? 0;
      pixels[p + 3] = transparency?.[index] ?? 255;
    } else {
      pixels[p] = samples[s]!;
      pixels[p + 1] = samples[s + 1]!;
      pixels[p + 2] = samples[s + 2]!;
      pixels[p + 3] = colorType === 6 ? samples[s + 3]! : 255;
    }
  }
  return { width, height, pixels };
}

/** Reverses the five PNG row filters. */
function unfilter(raw: Buffer, width: number, height: number, bpp: number): Uint8Array {
  const stride = width * bpp;
  const out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = y * (stride + 1) + 1;
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[row + x - bpp]! : 0;
      const b = y > 0 ? out[row - stride + x]! : 0;
      const c = x >= bpp && y > 0 ? out[row - stride + x - bpp]! : 0;
      const value = raw[line + x]!;
      let predicted: number;
      if (filter === 0) predicted = 0;
      else if (filter === 1) predicted = a;
      else if (filter === 2) predicted = b;
      else if (filter === 3) predicted = (a + b) >> 1;
      else if (filter === 4) predicted = paeth(a, b, c);
      else throw new RangeError(`unknown PNG filter ${filter}`);
      out[row + x] = (value + predicted) & 0xff;
    }
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

function chunk(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, 'latin1');
  body.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}
