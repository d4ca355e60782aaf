/** Audio as one channel of samples scaled to -1..1, what the decoders give. */
export interface DecodedAudio {
  samples: Float32Array;
  sampleRate: number;
}
