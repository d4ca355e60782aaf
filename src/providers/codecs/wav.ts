/**
 * The 44-byte header of a PCM WAV file (16-bit little-endian samples). With `dataBytes` unknown
 * (a stream whose length is not known yet) the RIFF and data sizes are 0xFFFFFFFF, which players
 * read as "until the end of the file".
 */
export function wavHeader(sampleRate: number, channels: number, dataBytes?: number): Uint8Array {
  const header = Buffer.alloc(44);
  const size = (value: number) => (dataBytes === undefined ? 0xffffffff : value);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(size(36 + (dataBytes ?? 0)), 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * channels * 2, 28); // byte rate
  header.writeUInt16LE(channels * 2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(size(dataBytes ?? 0), 40);
  return header;
}

/** 16-bit samples as little-endian bytes. */
export function pcmBytes(samples: Int16Array): Uint8Array {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}
