import { MPEGDecoder } from 'mpg123-decoder';
import { OggOpusDecoder } from 'ogg-opus-decoder';
import { expect } from 'vitest';

/**
 * Independent readers of what the speech endpoints produce: the containers are parsed here by
 * their specs (not with the gateway's own code), and the codecs decoded with separate WASM
 * decoders (mpg123, libopus).
 */

export interface Wav {
  format: number;
  channels: number;
  sampleRate: number;
  bitsPerSample: number;
  declaredDataBytes: number;
  samples: Int16Array;
}

export function parseWav(bytes: Buffer): Wav {
  expect(bytes.toString('latin1', 0, 4)).toBe('RIFF');
  expect(bytes.toString('latin1', 8, 12)).toBe('WAVE');
  expect(bytes.toString('latin1', 12, 16)).toBe('fmt ');
  expect(bytes.toString('latin1', 36, 40)).toBe('data');
  const data = bytes.subarray(44);
  const samples = new Int16Array(Math.floor(data.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2);
  return {
    format: bytes.readUInt16LE(20),
    channels: bytes.readUInt16LE(22),
    sampleRate: bytes.readUInt32LE(24),
    bitsPerSample: bytes.readUInt16LE(34),
    declaredDataBytes: bytes.readUInt32LE(40),
    samples,
  };
}

const MP3_BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MP3_RATES_V2 = [22050, 24000, 16000];

/** Walks MPEG-2 Layer III frame headers from the start to the end of the file. */
export function mp3Frames(bytes: Buffer): { count: number; sampleRate: number; bitrateKbps: number } {
  let offset = 0;
  let count = 0;
  let sampleRate = 0;
  let bitrateKbps = 0;
  // An ID3v2 tag may come first.
  if (bytes.toString('latin1', 0, 3) === 'ID3') offset = 10 + ((bytes[6]! << 21) | (bytes[7]! << 14) | (bytes[8]! << 7) | bytes[9]!);
  while (offset + 4 <= bytes.length) {
    const header = bytes.readUInt32BE(offset);
    expect(header >>> 21, `frame sync at byte ${offset}`).toBe(0x7ff);
    const version = (header >>> 19) & 3; // 2 = MPEG-2
    const layer = (header >>> 17) & 3; // 1 = Layer III
    expect(version).toBe(2);
    expect(layer).toBe(1);
    bitrateKbps = MP3_BITRATES_V2[(header >>> 12) & 15]!;
    sampleRate = MP3_RATES_V2[(header >>> 10) & 3]!;
    const padding = (header >>> 9) & 1;
    const length = Math.floor((72_000 * bitrateKbps) / sampleRate) + padding;
    expect(length).toBeGreaterThan(4);
    offset += length;
    count++;
  }
  expect(offset).toBe(bytes.length);
  return { count, sampleRate, bitrateKbps };
}

export interface OggPage {
  flags: number;
  granule: bigint;
  serial: number;
  sequence: number;
  packets: Buffer[];
}

/** Splits an Ogg stream into pages, checking each CRC (computed bit by bit here). */
export function oggPages(bytes: Buffer): OggPage[] {
  const pages: OggPage[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    expect(bytes.toString('latin1', offset, offset + 4)).toBe('OggS');
    const segments = bytes[offset + 26]!;
    const lacing = bytes.subarray(offset + 27, offset + 27 + segments);
    const bodyLength = lacing.reduce((sum, value) => sum + value, 0);
    const end = offset + 27 + segments + bodyLength;
    const page = Buffer.from(bytes.subarray(offset, end));
    const crc = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    expect(slowOggCrc(page), `CRC of page ${pages.length}`).toBe(crc);
    const packets: Buffer[] = [];
    let start = offset + 27 + segments;
    let current: Buffer[] = [];
    for (const value of lacing) {
      current.push(bytes.subarray(start, start + value));
      start += value;
      if (value < 255) {
        packets.push(Buffer.concat(current));
        current = [];
      }
    }
    pages.push({
      flags: bytes[offset + 5]!,
      granule: bytes.readBigInt64LE(offset + 6),
      serial: bytes.readUInt32LE(offset + 14),
      sequence: bytes.readUInt32LE(offset + 18),
      packets,
    });
    offset = end;
  }
  return pages;
}

function slowOggCrc(data: Buffer): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? ((crc << 1) ^ 0x04c11db7) >>> 0 : (crc << 1) >>> 0;
  }
  return crc >>> 0;
}

export async function decodeMp3(bytes: Buffer): Promise<{ samples: Float32Array; sampleRate: number; errors: number }> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const decoded = decoder.decode(bytes);
    return { samples: decoded.channelData[0]!, sampleRate: decoded.sampleRate, errors: decoded.errors.length };
  } finally {
    decoder.free();
  }
}

export async function decodeOpus(bytes: Buffer): Promise<{ samples: Float32Array; sampleRate: number; errors: number }> {
  const decoder = new OggOpusDecoder();
  await decoder.ready;
  try {
    const decoded = await decoder.decodeFile(bytes);
    return { samples: decoded.channelData[0]!, sampleRate: decoded.sampleRate, errors: decoded.errors.length };
  } finally {
    decoder.free();
  }
}

/** Root mean square of samples scaled to -1..1. */
export function rms(samples: ArrayLike<number>, scale = 1): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += (samples[i]! / scale) ** 2;
  return Math.sqrt(sum / Math.max(1, samples.length));
}
