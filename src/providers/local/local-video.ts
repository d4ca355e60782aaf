import { yieldToLoop } from '../../http/yield-to-loop.js';
import { PcmH264Encoder, type YuvFrame } from '../codecs/h264.js';
import { muxMp4 } from '../codecs/mp4.js';
import { mix, paletteOf, seedBytes, type Rgb } from './palette.js';

export interface LocalVideoSpec {
  prompt: string;
  width: number;
  height: number;
  seconds: number;
  fps: number;
}

/**
 * Renders the local video model's clip: a disc in the prompt's colours bouncing over a gradient,
 * with a progress bar along the bottom, as a real H.264 MP4 (`h264.ts`, `mp4.ts`). One IDR
 * picture per second, so a player can seek to any second. One frame is drawn and encoded per
 * turn of the event loop (a whole 640x640 clip took 0.7 s at once).
 */
export async function renderLocalVideo(spec: LocalVideoSpec): Promise<Uint8Array> {
  const encoder = new PcmH264Encoder(spec.width, spec.height);
  const frameCount = Math.max(1, Math.round(spec.seconds * spec.fps));
  const canvas = new Canvas(encoder.codedWidth, encoder.codedHeight, spec.width, spec.height, seedBytes(spec.prompt));
  const samples: { nals: Uint8Array[]; keyframe: boolean }[] = [];
  let previous: YuvFrame | undefined;
  for (let index = 0; index < frameCount; index++) {
    await yieldToLoop();
    const frame = canvas.draw(frameCount === 1 ? 1 : index / (frameCount - 1));
    const keyframe = index % spec.fps === 0;
    const { nal } = encoder.encode(frame, keyframe ? undefined : previous);
    samples.push({ nals: [nal], keyframe });
    previous = frame;
  }
  return muxMp4({
    width: spec.width,
    height: spec.height,
    fps: spec.fps,
    sps: encoder.sps(),
    pps: encoder.pps(),
    samples,
    profile: PcmH264Encoder.PROFILE,
    constraints: PcmH264Encoder.CONSTRAINTS,
    level: PcmH264Encoder.LEVEL,
  });
}

/** Draws frames in YUV 4:2:0 (BT.601, limited range, so no sample is ever 0). */
class Canvas {
  private readonly background: { y: Uint8Array; u: Uint8Array; v: Uint8Array };
  private readonly accent: readonly [number, number, number];
  private readonly bar: readonly [number, number, number];
  private readonly radius: number;

  constructor(
    private readonly width: number,
    private readonly height: number,
    private readonly visibleWidth: number,
    private readonly visibleHeight: number,
    seed: Uint8Array,
  ) {
    const palette = paletteOf(seed);
    // The gradient runs left to right, so one colour per column.
    const columns = Array.from({ length: width }, (_, x) => yuv(mix(palette.from, palette.to, x / Math.max(1, width - 1))));
    const y = new Uint8Array(width * height);
    const u = new Uint8Array((width / 2) * (height / 2));
    const v = new Uint8Array(u.length);
    for (let row = 0; row < height; row++) for (let x = 0; x < width; x++) y[row * width + x] = columns[x]![0];
    for (let row = 0; row < height / 2; row++) {
      for (let x = 0; x < width / 2; x++) {
        u[row * (width / 2) + x] = columns[x * 2]![1];
        v[row * (width / 2) + x] = columns[x * 2]![2];
      }
    }
    this.background = { y, u, v };
    this.accent = yuv(palette.accent);
    this.bar = yuv([235, 235, 235]);
    this.radius = Math.max(4, Math.round(visibleHeight / 6));
  }

  /** The frame at time `t` (0 at the start, 1 at the end). */
  draw(t: number): YuvFrame {
    const frame: YuvFrame = { y: this.background.y.slice(), u: this.background.u.slice(), v: this.background.v.slice() };
    // The disc crosses the picture and comes back: a triangle wave over the clip.
    const span = this.visibleWidth - 2 * this.radius;
    const phase = t * 2 <= 1 ? t * 2 : 2 - t * 2;
    const cx = Math.round(this.radius + span * phase);
    const cy = Math.round(this.visibleHeight / 2 + (this.visibleHeight / 5) * Math.sin(t * Math.PI * 2));
    this.fill(frame, this.accent, (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= this.radius ** 2);
    const barHeight = Math.max(2, Math.round(this.visibleHeight / 30) * 2);
    const barEnd = Math.round(this.visibleWidth * t);
    this.fill(frame, this.bar, (x, y) => y >= this.visibleHeight - barHeight && y < this.visibleHeight && x < barEnd);
    return frame;
  }

  private fill(frame: YuvFrame, color: readonly [number, number, number], inside: (x: number, y: number) => boolean): void {
    const chromaWidth = this.width / 2;
    for (let y = 0; y < this.height; y++) {
      for (let x = 0; x < this.width; x++) {
        if (!inside(x, y)) continue;
        frame.y[y * this.width + x] = color[0];
        if (x % 2 === 0 && y % 2 === 0) {
          frame.u[(y / 2) * chromaWidth + x / 2] = color[1];
          frame.v[(y / 2) * chromaWidth + x / 2] = color[2];
        }
      }
    }
  }
}

/** RGB → Y'CbCr, BT.601 limited range. */
function yuv([r, g, b]: Rgb): [number, number, number] {
  const clamp = (value: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.round(value)));
  return [
    clamp(16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255, 16, 235),
    clamp(128 + (-37.797 * r - 74.203 * g + 112 * b) / 255, 16, 240),
    clamp(128 + (112 * r - 93.786 * g - 18.214 * b) / 255, 16, 240),
  ];
}
