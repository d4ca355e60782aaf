import type { DecodedAudio } from './decoded-audio.js';

/** The highest rate a waveform keeps: enough for voices (and their energy to the millisecond). */
export const WAVEFORM_RATE = 16_000;
/** Samples per block: the waveform grows a block at a time and is never copied whole. */
export const WAVEFORM_BLOCK = 16 * 1024;

/**
 * One channel of audio at `WAVEFORM_RATE` (or its source's rate when lower), kept in blocks, built
 * from decoded pieces as they come: each piece is resampled (the mean of the source samples each
 * output sample stands for) and appended, so a 48 kHz file costs a third of its samples, held
 * once. A source whose rate changes midway is an error.
 */
export class Waveform {
  private readonly blocks: Float32Array[] = [];
  /** Samples held. */
  length = 0;
  /** Set by the first piece. */
  sampleRate = 0;
  /** The source's duration in seconds (the resampled length may differ by a sample). */
  seconds = 0;
  private sourceRate = 0;
  /** Source samples per output sample, and the running mean of the output sample being built. */
  private ratio = 1;
  private sourceIndex = 0;
  private sum = 0;
  private count = 0;

  /** Samples the blocks can hold: at most one block more than `length`. */
  get heldSamples(): number {
    return this.blocks.length * WAVEFORM_BLOCK;
  }

  append({ samples, sampleRate }: DecodedAudio): void {
    if (this.sourceRate === 0) {
      this.sourceRate = sampleRate;
      this.sampleRate = Math.min(WAVEFORM_RATE, sampleRate);
      this.ratio = sampleRate / this.sampleRate;
    } else if (sampleRate !== this.sourceRate) {
      throw new Error(`the sample rate changes midway (${this.sourceRate} Hz, then ${sampleRate} Hz)`);
    }
    this.seconds += samples.length / sampleRate;
    for (const sample of samples) {
      // The output sample this source sample falls in: when it moves on, the previous one is complete.
      if (this.count > 0 && Math.floor(this.sourceIndex / this.ratio) > this.length) this.flush();
      this.sum += sample;
      this.count++;
      this.sourceIndex++;
    }
  }

  /** Completes the last output sample; called once the source has ended. */
  end(): void {
    if (this.count > 0) this.flush();
  }

  at(index: number): number {
    return this.blocks[Math.floor(index / WAVEFORM_BLOCK)]![index % WAVEFORM_BLOCK]!;
  }

  /** A copy of samples `from` to `to` (excluded), for a short window. */
  slice(from: number, to: number): Float32Array {
    const out = new Float32Array(Math.max(0, to - from));
    for (let index = from; index < to; index++) out[index - from] = this.at(index);
    return out;
  }

  /** The blocks in order, each cut to the samples it holds. */
  *pieces(): Generator<Float32Array> {
    for (const [index, block] of this.blocks.entries()) yield block.subarray(0, Math.min(WAVEFORM_BLOCK, this.length - index * WAVEFORM_BLOCK));
  }

  private flush(): void {
    const at = this.length % WAVEFORM_BLOCK;
    if (at === 0) this.blocks.push(new Float32Array(WAVEFORM_BLOCK));
    this.blocks.at(-1)![at] = this.sum / this.count;
    this.length++;
    this.sum = 0;
    this.count = 0;
  }
}

/** The waveform of decoded pieces, as they come. */
export async function readWaveform(pieces: AsyncIterable<DecodedAudio>): Promise<Waveform> {
  const waveform = new Waveform();
  for await (const piece of pieces) waveform.append(piece);
  waveform.end();
  return waveform;
}
