import { describe, expect, it } from 'vitest';
import { decodeAudio as decodePieces, type DecodedAudio } from '../../src/providers/codecs/decode-audio.js';
import { OggOpusEncoder, oggCrc } from '../../src/providers/codecs/ogg-opus.js';
import { isGatewayError } from '../../src/errors.js';
import { readWaveform, WAVEFORM_BLOCK } from '../../src/providers/codecs/waveform.js';
import { LOCAL_TRANSCRIPTION_SLOTS, localTranscription, MAX_TRANSCRIPTION_SECONDS } from '../../src/providers/local/local-transcription.js';
import { Slots } from '../../src/providers/local/slots.js';
import { loopTurnsDuring } from './helpers.js';
import type { TranscriptionRequest } from '../../src/providers/media.js';

/**
 * The decoders the local transcription model reads uploads with, on files written here by the
 * formats' specs (not by the gateway's encoders, except Opus, whose container the gateway writes
 * and libopus fills).
 */

/** The decoded pieces of a file, joined (the gateway never joins them: the tests compare samples). */
async function decodeAudio(bytes: Uint8Array, maxSeconds = MAX_TRANSCRIPTION_SECONDS): Promise<DecodedAudio> {
  const pieces: DecodedAudio[] = [];
  for await (const piece of decodePieces(bytes, maxSeconds)) pieces.push(piece);
  const samples = new Float32Array(pieces.reduce((sum, piece) => sum + piece.samples.length, 0));
  let at = 0;
  for (const piece of pieces) {
    samples.set(piece.samples, at);
    at += piece.samples.length;
  }
  return { samples, sampleRate: pieces[0]?.sampleRate ?? 0 };
}

const RATE = 16_000;
/** 0.25 s of 440 Hz at half scale. */
const TONE = Float64Array.from({ length: RATE / 4 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / RATE));

type Encoding = { format: 1 | 3 | 0xfffe; bits: 8 | 16 | 24 | 32 | 64; float?: boolean };

/** A RIFF WAVE file of `channels` copies of `samples` (the second channel inverted when `invert`). */
function wav(samples: ArrayLike<number>, { format, bits, float = format === 3 }: Encoding, channels = 1, invert = false): Buffer {
  const width = bits / 8;
  const data = Buffer.alloc(samples.length * channels * width);
  for (let i = 0; i < samples.length; i++) {
    for (let channel = 0; channel < channels; channel++) {
      const value = channel === 1 && invert ? -samples[i]! : samples[i]!;
      const at = (i * channels + channel) * width;
      if (float && bits === 32) data.writeFloatLE(value, at);
      else if (float) data.writeDoubleLE(value, at);
      else if (bits === 8) data.writeUInt8(Math.round(value * 127) + 128, at);
      else if (bits === 16) data.writeInt16LE(Math.round(value * 32767), at);
      else if (bits === 24) data.writeIntLE(Math.round(value * 8388607), at, 3);
      else data.writeInt32LE(Math.round(value * 2147483647), at);
    }
  }
  const extensible = format === 0xfffe;
  const fmt = Buffer.alloc(extensible ? 40 : 16);
  fmt.writeUInt16LE(format, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(RATE, 4);
  fmt.writeUInt32LE(RATE * channels * width, 8);
  fmt.writeUInt16LE(channels * width, 12);
  fmt.writeUInt16LE(bits, 14);
  if (extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(bits, 18);
    // The sub-format GUID starts with the real format tag.
    fmt.writeUInt16LE(float ? 3 : 1, 24);
  }
  // A LIST chunk of odd length before the data: chunks are padded to even lengths.
  const list = Buffer.from('LIST\u0003\u0000\u0000\u0000abc\u0000', 'latin1');
  const chunk = (id: string, body: Buffer) => Buffer.concat([Buffer.from(id, 'latin1'), u32(body.length), body]);
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), chunk('fmt ', fmt), list, chunk('data', data)]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32(body.length), body]);
}

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(value);
  return out;
}

/** An Ogg page of stream 7 holding `packets` (each under 255 bytes), its CRC set. */
function oggPage(packets: readonly Buffer[], sequence: number, flags: number, granule: bigint): Buffer {
  const header = Buffer.alloc(27);
  header.write('OggS', 0, 'latin1');
  header[5] = flags;
  header.writeBigInt64LE(granule, 6);
  header.writeUInt32LE(7, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = packets.length;
  const page = Buffer.concat([header, Buffer.from(packets.map((packet) => packet.length)), ...packets]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

/**
 * Ogg Opus of `packets` one-byte packets, each an empty 60 ms frame (TOC 0x18: SILK 60 ms, one
 * frame): 60 ms of concealed silence each, so half an hour of audio fits in 70 kB.
 */
function tinyPacketOpus(packets: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1;
  head[9] = 1;
  head.writeUInt16LE(312, 10);
  head.writeUInt32LE(48_000, 12);
  const tags = Buffer.concat([Buffer.from('OpusTags', 'latin1'), u32(0), u32(0)]);
  const pages = [oggPage([head], 0, 0x02, 0n), oggPage([tags], 1, 0, 0n)];
  for (let sequence = 2, left = packets; left > 0; sequence++) {
    const count = Math.min(255, left);
    left -= count;
    pages.push(
      oggPage(
        Array.from({ length: count }, () => Buffer.from([0x18])),
        sequence,
        left === 0 ? 0x04 : 0,
        -1n,
      ),
    );
  }
  return Buffer.concat(pages);
}

function maxError(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
  return worst;
}

function request(data: Buffer, responseFormat = 'verbose_json'): TranscriptionRequest {
  return {
    fields: { model: 'local-transcription', response_format: responseFormat } as TranscriptionRequest['fields'],
    form: [],
    file: { field: 'file', filename: 'a', mimeType: '', data },
  };
}

describe('audio decoding: WAV', () => {
  it.each([
    { name: '8-bit PCM', encoding: { format: 1, bits: 8 }, tolerance: 1 / 100 },
    { name: '16-bit PCM', encoding: { format: 1, bits: 16 }, tolerance: 1e-4 },
    { name: '24-bit PCM', encoding: { format: 1, bits: 24 }, tolerance: 1e-6 },
    { name: '32-bit PCM', encoding: { format: 1, bits: 32 }, tolerance: 1e-6 },
    { name: '32-bit float', encoding: { format: 3, bits: 32 }, tolerance: 1e-6 },
    { name: '64-bit float', encoding: { format: 3, bits: 64 }, tolerance: 1e-6 },
    { name: 'WAVE_FORMAT_EXTENSIBLE 16-bit', encoding: { format: 0xfffe, bits: 16 }, tolerance: 1e-4 },
  ] as { name: string; encoding: Encoding; tolerance: number }[])('$name: the samples, at their rate', async ({ encoding, tolerance }) => {
    const decoded = await decodeAudio(wav(TONE, encoding));
    expect(decoded.sampleRate).toBe(RATE);
    expect(decoded.samples.length).toBe(TONE.length);
    expect(maxError(decoded.samples, TONE)).toBeLessThan(tolerance);
  });

  it('stereo is mixed down to one channel; a streamed data size (0xFFFFFFFF) runs to the end', async () => {
    const same = await decodeAudio(wav(TONE, { format: 1, bits: 16 }, 2));
    expect(maxError(same.samples, TONE)).toBeLessThan(1e-4);
    const opposite = await decodeAudio(wav(TONE, { format: 1, bits: 16 }, 2, true));
    expect(maxError(opposite.samples, new Float64Array(TONE.length))).toBeLessThan(1e-4);
    const streamed = wav(TONE, { format: 1, bits: 16 });
    streamed.writeUInt32LE(0xffffffff, streamed.length - TONE.length * 2 - 4);
    expect((await decodeAudio(streamed)).samples.length).toBe(TONE.length);
  });

  it('what it cannot read is an error saying why', async () => {
    const alaw = wav(TONE, { format: 1, bits: 16 });
    alaw.writeUInt16LE(6, 20);
    await expect(decodeAudio(alaw)).rejects.toThrow(/unsupported WAV encoding \(format 6/);
    await expect(decodeAudio(Buffer.from('RIFF\u0004\u0000\u0000\u0000WAVE', 'latin1'))).rejects.toThrow(/no data chunk/);
    await expect(decodeAudio(Buffer.from('fLaC\u0000\u0000\u0000\u0022', 'latin1'))).rejects.toThrow(/none of WAV/);
  });
});

describe('audio decoding: MP3 and Ogg Opus', () => {
  it('a stereo MP3 (LAME) is decoded by mpg123 and mixed down, its length within a frame of the input', async () => {
    const { Mp3Encoder } = await import('@breezystack/lamejs');
    const pcm = Int16Array.from(TONE, (value) => Math.round(value * 32767));
    const encoder = new Mp3Encoder(2, RATE, 64);
    const bytes = Buffer.concat([encoder.encodeBuffer(pcm, pcm), encoder.flush()].map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength)));
    const decoded = await decodeAudio(bytes);
    expect(decoded.sampleRate).toBe(RATE);
    expect(Math.abs(decoded.samples.length - TONE.length)).toBeLessThan(2 * 1152);
    // Both channels carry the tone (RMS 0.35 over its length): mixed down, the tone's level stays.
    let energy = 0;
    for (const value of decoded.samples) energy += value * value;
    expect(Math.sqrt(energy / TONE.length)).toBeGreaterThan(0.3);
    expect(Math.sqrt(energy / TONE.length)).toBeLessThan(0.4);
  });

  it('Ogg Opus: the pre-skip dropped and the end trimmed to the last granule, so the length is what was encoded', async () => {
    const samples = 48_000 / 4 + 123;
    const pcm = Int16Array.from({ length: samples }, (_, i) => Math.round(16_000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)));
    const encoder = new OggOpusEncoder(7);
    const bytes = Buffer.concat([encoder.start(), encoder.write(pcm), encoder.end()]);
    const original = Buffer.from(bytes);
    const decoded = await decodeAudio(bytes);
    expect(decoded.sampleRate).toBe(48_000);
    expect(decoded.samples.length).toBe(samples);
    // The upload is read, never written to.
    expect(bytes.equals(original)).toBe(true);
    // A file cut inside its last page is read up to the page before; a damaged page fails its CRC.
    expect((await decodeAudio(bytes.subarray(0, bytes.length - 10))).samples.length).toBeLessThan(samples);
    const damaged = Buffer.from(bytes);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 5) ^ 0xff, damaged.length - 5);
    await expect(decodeAudio(damaged)).rejects.toThrow(/CRC/);
  });
});

describe('audio decoding: at most MAX_TRANSCRIPTION_SECONDS', () => {
  it('WAV, MP3 and Ogg Opus longer than the limit are refused, saying so', async () => {
    await expect(decodeAudio(wav(TONE, { format: 1, bits: 16 }), 0.2)).rejects.toThrow('the audio is longer than 0.2 seconds');
    expect((await decodeAudio(wav(TONE, { format: 1, bits: 16 }), 0.25)).samples.length).toBe(TONE.length);

    const { Mp3Encoder } = await import('@breezystack/lamejs');
    const pcm = Int16Array.from(TONE, (value) => Math.round(value * 32767));
    const mp3Encoder = new Mp3Encoder(1, RATE, 64);
    const mp3 = Buffer.concat([mp3Encoder.encodeBuffer(pcm), mp3Encoder.flush()].map((part) => Buffer.from(part.buffer, part.byteOffset, part.byteLength)));
    await expect(decodeAudio(mp3, 0.1)).rejects.toThrow('the audio is longer than 0.1 seconds');

    const opusEncoder = new OggOpusEncoder(7);
    const opus = Buffer.concat([opusEncoder.start(), opusEncoder.write(new Int16Array(48_000 / 4)), opusEncoder.end()]);
    await expect(decodeAudio(opus, 0.1)).rejects.toThrow('the audio is longer than 0.1 seconds');
  });

  it('half an hour of Opus in 70 kB is a 400 naming file, decoded no further than the limit', async () => {
    const halfHour = tinyPacketOpus(30_000);
    expect(halfHour.length).toBeLessThan(70_000);
    // Under the limit, the same packets are read as silence of their length.
    expect((await decodeAudio(tinyPacketOpus(100))).samples.length).toBe(100 * 2880 - 312);
    const error = await localTranscription(request(halfHour)).catch((caught: unknown) => caught);
    expect(isGatewayError(error) && error.status).toBe(400);
    expect(error).toMatchObject({ param: 'file', code: 'invalid_value' });
    expect((error as Error).message).toContain(`the audio is longer than ${MAX_TRANSCRIPTION_SECONDS} seconds`);
  });
});

describe('local transcription: other audio', () => {
  it('silence has no words; its duration is still told', async () => {
    const transcript = await localTranscription(request(wav(new Float64Array(RATE), { format: 1, bits: 16 })));
    expect(transcript).toMatchObject({ text: '', words: [], segments: [], duration: 1, usage: { type: 'duration', seconds: 1 } });
  });

  it('a tone with no pauses is one word of at most twelve letters, one sentence; 300 Hz is a female voice', async () => {
    const long = Float64Array.from({ length: RATE * 2 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 300 * i) / RATE));
    const transcript = await localTranscription(request(wav(long, { format: 1, bits: 16 }), 'json'));
    expect(transcript.text).toBe('Lalalalalala.');
    expect(transcript.words).toEqual([{ word: 'Lalalalalala', start: 0, end: 2 }]);
    expect(transcript.usage).toMatchObject({ type: 'tokens', input_tokens: 20, input_token_details: { audio_tokens: 20, text_tokens: 0 } });
  });
});

describe('local transcription: bounded memory and work (code review 8)', () => {
  it("the review's 890 s of silent Opus (about 50 kB here) is a 400 naming file: the local model reads 10 minutes", async () => {
    const error = await localTranscription(request(tinyPacketOpus(Math.ceil(890 / 0.06)))).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, param: 'file' });
    expect((error as Error).message).toContain(`the audio is longer than ${MAX_TRANSCRIPTION_SECONDS} seconds`);
  });

  it('590 s of silent Opus: answered, decoded in packets, held once at 16 kHz, the loop turning as it goes', async () => {
    const packets = Math.floor(590 / 0.06);
    const file = tinyPacketOpus(packets);
    let longestPiece = 0;
    const pieces = (async function* () {
      for await (const piece of decodePieces(file, MAX_TRANSCRIPTION_SECONDS)) {
        longestPiece = Math.max(longestPiece, piece.samples.length);
        yield piece;
      }
    })();
    const waveform = await readWaveform(pieces);
    // One packet at a time (60 ms at 48 kHz), never the whole file joined.
    expect(longestPiece).toBeLessThanOrEqual(2880);
    expect(waveform.sampleRate).toBe(16_000);
    expect(waveform.length).toBe(Math.ceil(((packets * 2880 - 312) / 48_000) * 16_000));
    // Before: 48 kHz pieces and a joined copy, 6 samples for each of these.
    expect(waveform.heldSamples).toBeLessThanOrEqual(waveform.length + WAVEFORM_BLOCK);

    let transcript: Awaited<ReturnType<typeof localTranscription>> | undefined;
    const turns = await loopTurnsDuring(async () => {
      transcript = await localTranscription(request(file));
    });
    expect(transcript).toMatchObject({ text: '', words: [] });
    expect(transcript!.duration).toBeCloseTo((packets * 2880 - 312) / 48_000, 2);
    expect(turns).toBeGreaterThanOrEqual(packets / 32);
  });
});

describe('Slots: local transcriptions at once', () => {
  it(`at most ${LOCAL_TRANSCRIPTION_SLOTS} hold a slot; the others wait in order, and a waiter that leaves is dropped`, async () => {
    const slots = new Slots(2);
    const first = await slots.take();
    const second = await slots.take();
    const order: string[] = [];
    const granted = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const third = slots.take().then(granted('third'));
    const leaving = new AbortController();
    const gone = slots.take(leaving.signal).catch(() => order.push('left'));
    const fourth = slots.take().then(granted('fourth'));
    expect(slots.queued).toBe(3);
    leaving.abort();
    await gone;
    expect(slots.queued).toBe(2);
    first();
    first();
    (await third)();
    second();
    (await fourth)();
    expect(order).toEqual(['left', 'third', 'fourth']);
    // All released: two slots free again.
    await slots.take();
    await slots.take();
    expect(slots.queued).toBe(0);
  });
});
