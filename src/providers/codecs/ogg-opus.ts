import OpusScript from 'opusscript';

/** Opus always decodes at 48 kHz; granule positions count 48 kHz samples. */
export const OPUS_RATE = 48_000;
/** 20 ms frames. */
const FRAME = 960;
/**
 * Samples the decoder drops at the start (RFC 7845 "pre-skip"): libopus' encoder lookahead at
 * 48 kHz for the audio application (2.5 ms + 4 ms).
 */
const PRE_SKIP = 312;

/**
 * Encodes mono 48 kHz PCM to Ogg Opus (RFC 7845) page by page, so the file can be streamed as it
 * is produced: `start()` gives the two header pages, `write()` the pages of whole 20 ms frames,
 * `end()` the last page (zero-padded frame, end-of-stream flag, granule trimmed to the real
 * length). Opus itself is libopus (`opusscript`); the container is written here.
 */
export class OggOpusEncoder {
  private readonly opus = new OpusScript(OPUS_RATE, 1, OpusScript.Application.AUDIO);
  private readonly serial: number;
  private sequence = 0;
  private pending = new Int16Array(0);
  private samples = 0;
  private granule = PRE_SKIP;

  constructor(serial = Math.floor(Math.random() * 0xffffffff)) {
    this.serial = serial >>> 0;
  }

  start(): Uint8Array {
    const head = Buffer.alloc(19);
    head.write('OpusHead', 0, 'latin1');
    head[8] = 1; // version
    head[9] = 1; // channels
    head.writeUInt16LE(PRE_SKIP, 10);
    head.writeUInt32LE(OPUS_RATE, 12); // input sample rate (informational)
    head.writeInt16LE(0, 16); // output gain
    head[18] = 0; // channel mapping family 0: mono/stereo
    const vendor = Buffer.from('infergate local', 'utf8');
    const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
    tags.write('OpusTags', 0, 'latin1');
    tags.writeUInt32LE(vendor.length, 8);
    vendor.copy(tags, 12);
    tags.writeUInt32LE(0, 12 + vendor.length); // no user comments
    return Buffer.concat([this.page([head], 0, 0x02), this.page([tags], 0, 0)]);
  }

  /** Encodes the whole frames available; keeps the rest for the next call. */
  write(pcm: Int16Array): Uint8Array {
    const all = new Int16Array(this.pending.length + pcm.length);
    all.set(this.pending);
    all.set(pcm, this.pending.length);
    this.samples += pcm.length;
    // At least one sample stays behind, so the final page always ends a (padded) packet.
    const whole = Math.floor(Math.max(0, all.length - 1) / FRAME) * FRAME;
    this.pending = all.slice(whole);
    if (whole === 0) return new Uint8Array(0);
    // One page per second of audio at most: a page holds up to 255 lacing values.
    const pages: Uint8Array[] = [];
    for (let offset = 0; offset < whole; offset += 50 * FRAME) {
      const part = all.subarray(offset, Math.min(whole, offset + 50 * FRAME));
      this.granule += part.length;
      pages.push(this.page(this.encodeFrames(part), this.granule, 0));
    }
    return Buffer.concat(pages);
  }

  /** The last page: the remaining samples padded to a frame, flagged end of stream. */
  end(): Uint8Array {
    const last = new Int16Array(FRAME);
    last.set(this.pending);
    const packets = this.encodeFrames(last);
    this.pending = new Int16Array(0);
    this.opus.delete();
    // Granule of the final page = pre-skip + the real number of samples: the padding is trimmed.
    return this.page(packets, PRE_SKIP + this.samples, 0x04);
  }

  private encodeFrames(pcm: Int16Array): Uint8Array[] {
    const packets: Uint8Array[] = [];
    for (let offset = 0; offset < pcm.length; offset += FRAME) {
      const frame = pcm.subarray(offset, offset + FRAME);
      packets.push(this.opus.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength), FRAME));
    }
    return packets;
  }

  /** One Ogg page holding whole packets (each under 255 × 255 bytes). */
  private page(packets: readonly Uint8Array[], granule: number, flags: number): Uint8Array {
    const lacing: number[] = [];
    for (const packet of packets) {
      let left = packet.length;
      while (left >= 255) {
        lacing.push(255);
        left -= 255;
      }
      lacing.push(left);
    }
    if (lacing.length > 255) throw new RangeError('OggOpusEncoder: too many packets for one page');
    const header = Buffer.alloc(27 + lacing.length);
    header.write('OggS', 0, 'latin1');
    header[4] = 0; // version
    header[5] = flags; // 0x02 first page, 0x04 last page
    header.writeBigUInt64LE(BigInt(granule), 6);
    header.writeUInt32LE(this.serial, 14);
    header.writeUInt32LE(this.sequence++, 18);
    header.writeUInt32LE(0, 22); // CRC, filled below
    header[26] = lacing.length;
    header.set(lacing, 27);
    const page = Buffer.concat([header, ...packets]);
    page.writeUInt32LE(oggCrc(page), 22);
    return page;
  }
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
    table[i] = crc >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, initial value 0. */
export function oggCrc(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc >>> 0;
}
