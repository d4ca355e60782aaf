import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodePng, encodePng } from '../../src/providers/codecs/png.js';
import { drawPicture } from '../../src/providers/local/local-images.js';
import { localSpeech } from '../../src/providers/local/local-speech.js';
import { renderLocalVideo } from '../../src/providers/local/local-video.js';
import { hasTool, run } from './helpers.js';
import { nalTypes, videoTrack } from './mp4-boxes.js';

const dir = mkdtempSync(join(tmpdir(), 'infergate-encoders-'));
const ffmpeg = hasTool('ffprobe') && hasTool('ffmpeg');

async function speech(format: 'mp3' | 'wav' | 'opus'): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of localSpeech(
    { model: 'local-speech', voice: 'en_male_bob_v1', input: 'Testing one two three.', response_format: format },
    new AbortController().signal,
  ))
    parts.push(part);
  return Buffer.concat(parts);
}

describe('local encoders', () => {
  it('PNG: signature, IHDR size, round trip through zlib', () => {
    const picture = drawPicture('round trip', 40, 30);
    const png = Buffer.from(encodePng(picture));
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.toString('latin1', 12, 16)).toBe('IHDR');
    expect([png.readUInt32BE(16), png.readUInt32BE(20), png[24], png[25]]).toEqual([40, 30, 8, 6]);
    expect(decodePng(png, { maxSide: 40 })).toEqual(picture);
  });

  it('PNG: the size comes from the first chunk alone and is bounded before anything is inflated', () => {
    const small = Buffer.from(encodePng(drawPicture('header', 4, 4)));
    const header = small.subarray(8, 33); // length, type, 13 bytes, CRC
    const huge = Buffer.from(header);
    huge.writeUInt32BE(4096, 8);
    huge.writeUInt32BE(4096, 12);
    huge.writeUInt32BE(crc32(huge.subarray(4, 21)), 21);
    const hugeHeader = Buffer.concat([small.subarray(0, 8), huge, small.subarray(33)]);
    expect(() => decodePng(hugeHeader, { maxSide: 2048 })).toThrow('4096x4096 is larger than 2048 pixels a side');
    const secondHeader = Buffer.concat([small.subarray(0, 33), huge, small.subarray(33)]);
    expect(() => decodePng(secondHeader, { maxSide: 2048 })).toThrow('IHDR is not the first chunk');
  });

  it('MP4: the box tree a player needs, one IDR per second', async () => {
    const mp4 = Buffer.from(await renderLocalVideo({ prompt: 'boxes', width: 96, height: 54, seconds: 2, fps: 12 }));
    const track = videoTrack(mp4);
    expect(track).toMatchObject({ boxes: ['ftyp', 'moov', 'mdat'], entryType: 'avc1', width: 96, height: 54, timescale: 12, duration: 24 });
    expect(track.syncSamples).toEqual([1, 13]);
    const types = nalTypes(mp4, track.chunkOffset, track.sizes);
    expect(types.filter((sample) => sample[0] === 5)).toHaveLength(2);
  });

  describe.skipIf(!ffmpeg)('decoded by ffmpeg', () => {
    it('the MP4 is H.264 that decodes without an error, frame for frame, with the drawn colours', async () => {
      const mp4 = Buffer.from(await renderLocalVideo({ prompt: 'ffmpeg', width: 160, height: 90, seconds: 2, fps: 12 }));
      const file = join(dir, 'clip.mp4');
      writeFileSync(file, mp4);
      const probe = JSON.parse(run('ffprobe', ['-v', 'error', '-count_frames', '-show_streams', '-show_format', '-of', 'json', file])) as {
        streams: Record<string, unknown>[];
        format: { format_name: string; duration: string };
      };
      expect(probe.streams[0]).toMatchObject({
        codec_name: 'h264',
        profile: 'Constrained Baseline',
        width: 160,
        height: 90,
        nb_read_frames: '24',
        r_frame_rate: '12/1',
      });
      expect(probe.format.format_name).toContain('mp4');
      expect(Number(probe.format.duration)).toBeCloseTo(2, 1);
      run('ffmpeg', ['-v', 'error', '-xerror', '-i', file, '-f', 'null', '-']);
      // The last frame, as RGB: the progress bar is across the whole bottom, the top-left is the gradient's start.
      const raw = join(dir, 'last.rgb');
      run('ffmpeg', ['-v', 'error', '-y', '-sseof', '-0.05', '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', raw]);
      const rgb = readFileSync(raw);
      expect(rgb.length).toBe(160 * 90 * 3);
      const pixel = (x: number, y: number) => [...rgb.subarray((y * 160 + x) * 3, (y * 160 + x) * 3 + 3)];
      for (const value of pixel(80, 88)) expect(value).toBeGreaterThan(200);
      expect(pixel(0, 0)).not.toEqual(pixel(159, 0));
    });

    it.each(['mp3', 'wav', 'opus'] as const)('%s speech decodes without an error at its rate', async (format) => {
      const file = join(dir, `speech.${format === 'opus' ? 'ogg' : format}`);
      writeFileSync(file, await speech(format));
      const probe = JSON.parse(run('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file])) as {
        streams: Record<string, unknown>[];
        format: { duration: string };
      };
      expect(probe.streams[0]).toMatchObject({
        codec_name: { mp3: 'mp3', wav: 'pcm_s16le', opus: 'opus' }[format],
        sample_rate: format === 'opus' ? '48000' : '24000',
        channels: 1,
      });
      expect(Number(probe.format.duration)).toBeGreaterThan(1);
      run('ffmpeg', ['-v', 'error', '-xerror', '-i', file, '-f', 'null', '-']);
    });

    it('the PNG is read by ffmpeg at its size', () => {
      const file = join(dir, 'picture.png');
      writeFileSync(file, encodePng(drawPicture('ffmpeg png', 33, 17)));
      const probe = JSON.parse(run('ffprobe', ['-v', 'error', '-show_streams', '-of', 'json', file])) as { streams: Record<string, unknown>[] };
      expect(probe.streams[0]).toMatchObject({ codec_name: 'png', width: 33, height: 17 });
    });
  });
});
