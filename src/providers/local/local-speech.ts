import { createHash } from 'node:crypto';
import { invalidRequest } from '../../errors.js';
import { yieldToLoop } from '../../http/yield-to-loop.js';
import type { SpeechRequest } from '../media.js';
import { pcmBytes, wavHeader } from '../codecs/wav.js';

/** WAV and MP3 are written at 24 kHz (OpenAI's rate); Opus always runs at 48 kHz. */
const SAMPLE_RATE = 24_000;
const MP3_KBPS = 48;
/** Opus always decodes at 48 kHz. */
const OPUS_RATE = 48_000;

/** The most data a WAV header can declare (its sizes are 32-bit). */
const MAX_WAV_DATA_BYTES = 0xffffffff - 36;

/** One word as a voiced tone, then a pause. */
interface Syllable {
  samples: number;
  pause: number;
  pitch: number;
}

/**
 * The local speech model. It cannot speak, so it "hums" the text: one voiced tone per word (a
 * fundamental and two harmonics, with a falling contour and soft edges), a short pause between
 * words and a longer one at punctuation. Pitch follows the voice (`en_female_anna_v1` is higher
 * than `en_male_…`, each name a little different), and `speed` scales every duration. The audio
 * is real: WAV (PCM), MP3 (LAME, via `@breezystack/lamejs`) or Ogg Opus (libopus, via
 * `opusscript`), produced word by word so the client receives it as it is made. Words are timed
 * as they are rendered (never all up front), and the loop turns between two words, so other
 * requests are served while a long text is spoken.
 */
export function localSpeech(request: SpeechRequest, signal: AbortSignal): AsyncIterable<Uint8Array> {
  const format = request.response_format ?? 'mp3';
  const rate = format === 'opus' ? OPUS_RATE : SAMPLE_RATE;
  const syllables = () => plan(request.input, request.voice, request.speed ?? 1, rate);
  const words = (async function* () {
    for (const syllable of syllables()) {
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('The operation was aborted.', 'AbortError');
      yield render(syllable, rate);
      await yieldToLoop();
    }
  })();

  if (format === 'wav') {
    let total = 0;
    for (const syllable of syllables()) total += syllable.samples + syllable.pause;
    if (total * 2 > MAX_WAV_DATA_BYTES) {
      throw invalidRequest(
        `Invalid value for 'input': spoken, it would last ${Math.round(total / rate)} seconds, more than a WAV file can hold (4 GiB); use mp3 or opus, or a shorter input.`,
        'input',
        'invalid_value',
      );
    }
    return (async function* () {
      yield wavHeader(rate, 1, total * 2);
      for await (const pcm of words) yield pcmBytes(pcm);
    })();
  }
  if (format === 'mp3') {
    return (async function* () {
      // The encoders are loaded on first use: importing the gateway never loads LAME or libopus.
      const { Mp3Encoder } = await import('@breezystack/lamejs');
      const encoder = new Mp3Encoder(1, rate, MP3_KBPS);
      // lamejs hands out Int8Arrays; the body must be made of Uint8Arrays.
      const bytes = (data: ArrayBufferView) => new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      for await (const pcm of words) yield bytes(encoder.encodeBuffer(pcm));
      yield bytes(encoder.flush());
    })();
  }
  return (async function* () {
    const { OggOpusEncoder } = await import('../codecs/ogg-opus.js');
    const encoder = new OggOpusEncoder();
    yield encoder.start();
    for await (const pcm of words) yield encoder.write(pcm);
    yield encoder.end();
  })();
}

/** Words and pauses, timed one word at a time: about 60 ms plus 55 ms per letter a word, divided by `speed`. */
function* plan(input: string, voice: string, speed: number, rate: number): Generator<Syllable> {
  const [, gender = '', name = ''] = voice.split('_');
  const base = gender === 'female' ? 220 : gender === 'male' ? 120 : 170;
  const shift = 0.9 + (createHash('sha256').update(name).digest()[0]! / 255) * 0.2;
  let index = 0;
  // An input of spaces only is spoken as one word.
  for (const [word] of /\S/.test(input) ? input.matchAll(/\S+/g) : [[input]]) {
    const letters = Math.min(12, Array.from(word.replace(/[^\p{L}\p{N}]/gu, '')).length || 1);
    const sentenceEnd = /[.!?;:。！？]$/u.test(word);
    yield {
      samples: Math.round(((0.06 + 0.055 * letters) / speed) * rate),
      pause: Math.round(((sentenceEnd ? 0.25 : 0.07) / speed) * rate),
      pitch: base * shift * (1 + 0.08 * Math.sin(index * 1.7)),
    };
    index++;
  }
}

function render(syllable: Syllable, rate: number): Int16Array {
  const out = new Int16Array(syllable.samples + syllable.pause);
  const edge = Math.min(Math.round(0.015 * rate), Math.floor(syllable.samples / 2));
  let phase = 0;
  for (let i = 0; i < syllable.samples; i++) {
    const pitch = syllable.pitch * (1 - 0.12 * (i / syllable.samples));
    phase += (2 * Math.PI * pitch) / rate;
    const envelope = Math.min(1, i / Math.max(1, edge), (syllable.samples - i) / Math.max(1, edge));
    const value = 0.6 * Math.sin(phase) + 0.25 * Math.sin(2 * phase) + 0.12 * Math.sin(3 * phase);
    out[i] = Math.round(value * envelope * 0.35 * 32767);
  }
  return out;
}
