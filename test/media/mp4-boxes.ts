import { expect } from 'vitest';

/** An ISO BMFF box: type, payload bounds and children for container boxes. */
export interface Box {
  type: string;
  start: number;
  end: number;
  payload: Buffer;
  children: Box[];
}

const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'stbl', 'dinf', 'edts']);

/** Parses the box tree (containers descended into; `stsd` entries parsed by `sampleEntry`). */
export function parseBoxes(bytes: Buffer, start = 0, end = bytes.length): Box[] {
  const boxes: Box[] = [];
  let offset = start;
  while (offset < end) {
    const size = bytes.readUInt32BE(offset);
    expect(size, `box size at ${offset}`).toBeGreaterThanOrEqual(8);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const boxEnd = offset + size;
    expect(boxEnd, `box ${type} ends inside its parent`).toBeLessThanOrEqual(end);
    const payload = bytes.subarray(offset + 8, boxEnd);
    boxes.push({ type, start: offset, end: boxEnd, payload, children: CONTAINERS.has(type) ? parseBoxes(bytes, offset + 8, boxEnd) : [] });
    offset = boxEnd;
  }
  expect(offset).toBe(end);
  return boxes;
}

/** The box at a path like `moov/trak/mdia/minf/stbl/stsz`. */
export function find(boxes: Box[], path: string): Box {
  let current: Box | undefined;
  let level = boxes;
  for (const type of path.split('/')) {
    current = level.find((box) => box.type === type);
    expect(current, `box ${path}`).toBeDefined();
    level = current!.children;
  }
  return current!;
}

/** What a player needs from the video track, read from the sample tables. */
export function videoTrack(bytes: Buffer) {
  const boxes = parseBoxes(bytes);
  const stbl = 'moov/trak/mdia/minf/stbl';
  const stsd = find(boxes, `${stbl}/stsd`).payload;
  const entry = stsd.subarray(8);
  const entryType = entry.toString('latin1', 4, 8);
  const width = entry.readUInt16BE(8 + 24);
  const height = entry.readUInt16BE(8 + 26);
  const avcC = parseBoxes(entry, 8 + 78, entry.readUInt32BE(0)).find((box) => box.type === 'avcC')!;
  const stsz = find(boxes, `${stbl}/stsz`).payload;
  const count = stsz.readUInt32BE(8);
  const sizes = Array.from({ length: count }, (_, i) => stsz.readUInt32BE(12 + i * 4));
  const stco = find(boxes, `${stbl}/stco`).payload;
  const chunkOffset = stco.readUInt32BE(8);
  const stss = find(boxes, `${stbl}/stss`).payload;
  const syncSamples = Array.from({ length: stss.readUInt32BE(4) }, (_, i) => stss.readUInt32BE(8 + i * 4));
  const mdhd = find(boxes, 'moov/trak/mdia/mdhd').payload;
  const handler = find(boxes, 'moov/trak/mdia/hdlr').payload.toString('latin1', 8, 12);
  return {
    boxes: boxes.map((box) => box.type),
    entryType,
    width,
    height,
    avcProfile: avcC.payload[1],
    handler,
    timescale: mdhd.readUInt32BE(12),
    duration: mdhd.readUInt32BE(16),
    sizes,
    chunkOffset,
    syncSamples,
    mdat: find(boxes, 'mdat'),
  };
}

/** Each sample is length-prefixed NAL units; returns the NAL unit types of every sample. */
export function nalTypes(bytes: Buffer, offset: number, sizes: number[]): number[][] {
  const types: number[][] = [];
  let position = offset;
  for (const size of sizes) {
    const end = position + size;
    const sample: number[] = [];
    while (position < end) {
      const length = bytes.readUInt32BE(position);
      sample.push(bytes[position + 4]! & 0x1f);
      position += 4 + length;
    }
    expect(position).toBe(end);
    types.push(sample);
  }
  return types;
}
