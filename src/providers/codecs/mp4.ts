/**
 * A minimal MP4 (ISO BMFF) muxer for one H.264 video track: `ftyp`, then `moov` (before the media
 * data, so a browser can start playing and seek with Range requests before it has the whole
 * file), then one `mdat` holding every sample as one chunk.
 */

export interface Mp4VideoTrack {
  width: number;
  height: number;
  /** Frames per second; one sample per frame. */
  fps: number;
  sps: Uint8Array;
  pps: Uint8Array;
  /** Samples in decoding order: NAL units (without start codes) and whether it is a sync sample. */
  samples: { nals: Uint8Array[]; keyframe: boolean }[];
  profile: number;
  constraints: number;
  level: number;
}

export function muxMp4(track: Mp4VideoTrack): Uint8Array {
  // Samples are NAL units each prefixed with its 4-byte length (avcC lengthSizeMinusOne = 3).
  const samples = track.samples.map((sample) => concat(sample.nals.flatMap((nal) => [u32(nal.length), nal])));
  const durationMs = Math.round((samples.length * 1000) / track.fps);
  const ftyp = box('ftyp', ascii('isom'), u32(0x200), ascii('isom'), ascii('iso2'), ascii('avc1'), ascii('mp41'));

  const buildMoov = (mdatDataOffset: number) =>
    box(
      'moov',
      mvhd(durationMs),
      box(
        'trak',
        tkhd(durationMs, track.width, track.height),
        box(
          'mdia',
          fullBox('mdhd', 0, 0, u32(0), u32(0), u32(track.fps), u32(samples.length), u16(0x55c4 /* und */), u16(0)),
          fullBox('hdlr', 0, 0, u32(0), ascii('vide'), u32(0), u32(0), u32(0), ascii('VideoHandler\0')),
          box(
            'minf',
            fullBox('vmhd', 0, 1, u16(0), u16(0), u16(0), u16(0)),
            box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))),
            box(
              'stbl',
              fullBox('stsd', 0, 0, u32(1), avc1(track)),
              fullBox('stts', 0, 0, u32(1), u32(samples.length), u32(1)),
              fullBox(
                'stss',
                0,
                0,
                u32(track.samples.filter((sample) => sample.keyframe).length),
                ...track.samples.flatMap((sample, index) => (sample.keyframe ? [u32(index + 1)] : [])),
              ),
              fullBox('stsc', 0, 0, u32(1), u32(1), u32(samples.length), u32(1)),
              fullBox('stsz', 0, 0, u32(0), u32(samples.length), ...samples.map((sample) => u32(sample.length))),
              fullBox('stco', 0, 0, u32(1), u32(mdatDataOffset)),
            ),
          ),
        ),
      ),
    );

  // The chunk offset depends on the size of moov, which does not depend on the offset's value.
  const moovSize = buildMoov(0).length;
  const mdatPayload = concat(samples);
  const moov = buildMoov(ftyp.length + moovSize + 8);
  const mdat = concat([u32(8 + mdatPayload.length), ascii('mdat'), mdatPayload]);
  return concat([ftyp, moov, mdat]);
}

/** The RFC 6381 codec string of the track, e.g. `avc1.42C01E`. */
export function codecString(track: Pick<Mp4VideoTrack, 'profile' | 'constraints' | 'level'>): string {
  return `avc1.${[track.profile, track.constraints, track.level].map((n) => n.toString(16).padStart(2, '0').toUpperCase()).join('')}`;
}

const IDENTITY_MATRIX = [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000];

function mvhd(durationMs: number): Uint8Array {
  return fullBox(
    'mvhd',
    0,
    0,
    u32(0),
    u32(0),
    u32(1000), // timescale: milliseconds
    u32(durationMs),
    u32(0x00010000), // rate 1.0
    u16(0x0100), // volume 1.0
    new Uint8Array(10),
    ...IDENTITY_MATRIX.map(u32),
    new Uint8Array(24),
    u32(2), // next_track_ID
  );
}

function tkhd(durationMs: number, width: number, height: number): Uint8Array {
  return fullBox(
    'tkhd',
    0,
    3, // enabled, in movie
    u32(0),
    u32(0),
    u32(1), // track_ID
    u32(0),
    u32(durationMs),
    new Uint8Array(8),
    u16(0), // layer
    u16(0), // alternate_group
    u16(0), // volume (video)
    u16(0),
    ...IDENTITY_MATRIX.map(u32),
    u32(width << 16),
    u32(height << 16),
  );
}

function avc1(track: Mp4VideoTrack): Uint8Array {
  const avcC = box(
    'avcC',
    new Uint8Array([1, track.profile, track.constraints, track.level, 0xff /* 4-byte lengths */, 0xe1 /* one SPS */]),
    u16(track.sps.length),
    track.sps,
    new Uint8Array([1]),
    u16(track.pps.length),
    track.pps,
  );
  return box(
    'avc1',
    new Uint8Array(6),
    u16(1), // data_reference_index
    new Uint8Array(16),
    u16(track.width),
    u16(track.height),
    u32(0x00480000), // 72 dpi
    u32(0x00480000),
    u32(0),
    u16(1), // frame_count
    new Uint8Array(32), // compressorname
    u16(0x0018), // depth
    u16(0xffff), // pre_defined = -1
    avcC,
  );
}

function box(type: string, ...parts: Uint8Array[]): Uint8Array {
  const payload = concat(parts);
  return concat([u32(8 + payload.length), ascii(type), payload]);
}

function fullBox(type: string, version: number, flags: number, ...parts: Uint8Array[]): Uint8Array {
  return box(type, u32(((version & 0xff) << 24) | (flags & 0xffffff)), ...parts);
}

function u32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value >>> 0);
  return out;
}

function u16(value: number): Uint8Array {
  return new Uint8Array([(value >> 8) & 0xff, value & 0xff]);
}

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (char) => char.charCodeAt(0));
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
