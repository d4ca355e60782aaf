import { GatewayError } from '../../errors.js';
import { yieldToLoop } from '../../http/yield-to-loop.js';
import { decodeAudio, READABLE_AUDIO } from '../codecs/decode-audio.js';
import { readWaveform, type Waveform } from '../codecs/waveform.js';
import type { Transcript, TranscriptionRequest, TranscriptSegment, TranscriptWord } from '../media.js';
import { Slots } from './slots.js';

/**
 * The longest audio the local model reads: 10 minutes are 9.6 M samples at 16 kHz, 38 MB held
 * once (a 200 KB Opus file of silence can declare them). OpenAI's own models take 25 MB files.
 */
export const MAX_TRANSCRIPTION_SECONDS = 10 * 60;
/** Local transcriptions decoding at once; more wait their turn (each holds up to 38 MB). */
export const LOCAL_TRANSCRIPTION_SLOTS = 2;
const slots = new Slots(LOCAL_TRANSCRIPTION_SLOTS);

/**
 * The timing of the local speech model (`local-speech.ts`), which this model reads back: a word
 * is a tone of 60 ms plus 55 ms per letter (at most 12), followed by a pause of 70 ms, or 250 ms
 * after punctuation that ends a sentence; `speed` divides every duration.
 */
const TONE_BASE = 0.06;
const TONE_PER_LETTER = 0.055;
const MAX_LETTERS = 12;
const WORD_PAUSE = 0.07;
const SENTENCE_PAUSE = 0.25;
/** Its pitch falls by 12% over a word: the middle of a word sounds at 94% of the voice's pitch. */
const MID_WORD_PITCH = 0.94;

/** Energy frames: 20 ms windows every millisecond (edges to the millisecond: a 35 ms pause read within 3%). */
const HOP_SECONDS = 0.001;
const WINDOW_SECONDS = 0.02;
/** Dips shorter than this inside a tone are codec artefacts, not pauses; tones shorter than this are clicks. */
const SHORTEST_PAUSE = 0.02;
const SHORTEST_TONE = 0.03;
/** What the threshold cuts off each faded edge of a tone, measured: put back on both sides. */
const EDGE_SECONDS = 0.0012;

/** The syllable a voice family hums its words with. */
const SYLLABLES = { female: 'la', male: 'du', neutral: 'na' } as const;

/** A voiced stretch, in seconds. */
interface Tone {
  start: number;
  end: number;
}

/** Tones whose pitch is measured for the voice's family (evenly spread: long audio costs no more). */
const PITCHED_TONES = 32;

/**
 * The local transcription model: it decodes the audio (WAV, MP3, Ogg Opus) and reads the local
 * speech model's hum back. Tones are found in the energy envelope; the pauses between them give
 * the speaking speed (the shortest ones are word pauses) and the sentence ends (the long ones);
 * each tone's length at that speed gives its word's letter count; the pitch gives the voice's
 * family (female, male, or neither). Each word is written with the family's syllable as many
 * letters long (`Lalal lala.` for a female voice), so the transcript is deterministic, has the
 * words that were spoken, and its word and segment timings are the audio's own. Any other audio
 * gets a transcript of the same kind from its louder stretches. Audio it cannot decode, or longer
 * than `MAX_TRANSCRIPTION_SECONDS`, is a 400 naming `file`. The audio is decoded piece by piece
 * into a 16 kHz waveform, the event loop turning as it goes; at most `LOCAL_TRANSCRIPTION_SLOTS`
 * run at once.
 */
export async function localTranscription(request: TranscriptionRequest, signal?: AbortSignal): Promise<Transcript> {
  const release = await slots.take(signal);
  try {
    return await transcribe(request);
  } finally {
    release();
  }
}

async function transcribe({ fields, file }: TranscriptionRequest): Promise<Transcript> {
  let audio: Waveform;
  try {
    audio = await readWaveform(decodeAudio(file.data, MAX_TRANSCRIPTION_SECONDS));
  } catch (error) {
    throw new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_value',
      param: 'file',
      message: `Invalid value for 'file': the local transcription model reads ${READABLE_AUDIO}, and could not decode this file: ${(error as Error).message}.`,
    });
  }
  const duration = round(audio.seconds);
  const tones = await findTones(audio);
  const { words, segments } = readWords(tones, familyOf(tones, audio));
  const text = segments.map((segment) => segment.text).join(' ');
  return {
    type: 'transcript',
    text,
    duration,
    segments,
    words,
    usage: fields.response_format === 'verbose_json' ? { type: 'duration', seconds: Math.ceil(duration) } : tokenUsage(duration, text, fields.prompt),
  };
}

/**
 * Usage as `gpt-4o-transcribe` reports it, estimated the way the local models estimate: ten
 * audio tokens a second (OpenAI's rate for audio input), a token per four characters of text.
 */
function tokenUsage(duration: number, text: string, prompt: string | undefined): Transcript['usage'] {
  const audioTokens = Math.ceil(duration * 10);
  const textTokens = Math.ceil((prompt ?? '').length / 4);
  const output = Math.ceil(text.length / 4);
  return {
    type: 'tokens',
    input_tokens: audioTokens + textTokens,
    output_tokens: output,
    total_tokens: audioTokens + textTokens + output,
    input_token_details: { audio_tokens: audioTokens, text_tokens: textTokens },
  };
}

/**
 * The voiced stretches: mean energy over centred 20 ms windows above a tenth of the loud level
 * (measured on the speech model's output in WAV, MP3 and Opus, that places a tone's edges within
 * a few milliseconds of where they were written; half the level cut about 8 ms off each faded edge).
 */
async function findTones(audio: Waveform): Promise<Tone[]> {
  const { sampleRate } = audio;
  const hop = Math.max(1, Math.round(HOP_SECONDS * sampleRate));
  const frames = Math.ceil(audio.length / hop);
  // Each hop's sum of squares, then each window's mean as a sum of hops (memory: one number a millisecond).
  const hops = new Float64Array(frames);
  let i = 0;
  for (const piece of audio.pieces()) {
    for (const sample of piece) hops[Math.floor(i++ / hop)]! += sample * sample;
    await yieldToLoop();
  }
  const reach = Math.max(1, Math.round(WINDOW_SECONDS / HOP_SECONDS / 2));
  const energy = new Float64Array(frames);
  let sum = 0;
  for (let frame = -reach; frame < frames; frame++) {
    if (frame + reach < frames) sum += hops[frame + reach]!;
    if (frame - reach - 1 >= 0) sum -= hops[frame - reach - 1]!;
    if (frame < 0) continue;
    const from = Math.max(0, frame - reach);
    const to = Math.min(frames - 1, frame + reach);
    energy[frame] = Math.max(0, sum) / (Math.min(audio.length, (to + 1) * hop) - from * hop);
  }
  const loud = percentile(energy, 0.9);
  // Silence (or digital near-silence) has no words.
  if (loud < 1e-7) return [];
  const threshold = loud / 10;
  const runs: { start: number; end: number }[] = [];
  for (let frame = 0; frame < frames; ) {
    if (energy[frame]! < threshold) {
      frame++;
      continue;
    }
    const start = frame;
    while (frame < frames && energy[frame]! >= threshold) frame++;
    const last = runs.at(-1);
    if (last && (start - last.end) * HOP_SECONDS < SHORTEST_PAUSE) last.end = frame;
    else runs.push({ start, end: frame });
  }
  return runs
    .filter((run) => (run.end - run.start) * HOP_SECONDS >= SHORTEST_TONE)
    .map((run) => {
      const start = Math.max(0, (run.start * hop) / sampleRate - EDGE_SECONDS);
      const end = Math.min(audio.length / sampleRate, (run.end * hop) / sampleRate + EDGE_SECONDS);
      return { start, end };
    });
}

/**
 * The fundamental near `center` by normalized autocorrelation over 30 ms, between 70 and 400 Hz:
 * the shortest lag within 10% of the best correlation (the harmonics' lags are shorter and
 * correlate less; the period's multiples correlate as well and are longer).
 */
function pitchAt(audio: Waveform, center: number): number | undefined {
  const { sampleRate } = audio;
  const length = Math.round(0.03 * sampleRate);
  const minLag = Math.floor(sampleRate / 400);
  const maxLag = Math.ceil(sampleRate / 70);
  const start = Math.max(0, center - Math.round((length + maxLag) / 2));
  if (start + length + maxLag > audio.length) return undefined;
  // The window, copied: indices below are relative to it.
  const samples = audio.slice(start, start + length + maxLag + 1);
  const from = 0;
  const correlations = new Float64Array(maxLag + 1);
  let best = 0;
  for (let lag = minLag; lag <= maxLag; lag++) {
    let product = 0;
    let a = 0;
    let b = 0;
    for (let i = from; i < from + length; i++) {
      const x = samples[i]!;
      const y = samples[i + lag]!;
      product += x * y;
      a += x * x;
      b += y * y;
    }
    const correlation = a > 0 && b > 0 ? product / Math.sqrt(a * b) : 0;
    correlations[lag] = correlation;
    if (correlation > best) best = correlation;
  }
  if (best < 0.5) return undefined;
  for (let lag = minLag; lag <= maxLag; lag++) if (correlations[lag]! >= best * 0.9) return sampleRate / lag;
  return undefined;
}

/** Words from tones: letters from their length at the speed the pauses show, sentences from the long pauses. */
function readWords(tones: readonly Tone[], family: keyof typeof SYLLABLES): { words: TranscriptWord[]; segments: TranscriptSegment[] } {
  if (tones.length === 0) return { words: [], segments: [] };
  const pauses = tones.slice(1).map((tone, index) => tone.start - tones[index]!.end);
  const speed = speedOf(pauses);
  const syllable = SYLLABLES[family];
  const words: TranscriptWord[] = [];
  const segments: TranscriptSegment[] = [];
  let sentence: string[] = [];
  let sentenceStart = tones[0]!.start;
  for (const [index, tone] of tones.entries()) {
    const letters = Math.min(MAX_LETTERS, Math.max(1, Math.round(((tone.end - tone.start) * speed - TONE_BASE) / TONE_PER_LETTER)));
    let word = syllable.repeat(Math.ceil(letters / 2)).slice(0, letters);
    if (sentence.length === 0) word = word[0]!.toUpperCase() + word.slice(1);
    words.push({ word, start: round(tone.start), end: round(tone.end) });
    // The last word ends the last sentence: a transcript ends with a full stop.
    const endsSentence = index === tones.length - 1 || pauses[index]! * speed > (WORD_PAUSE + SENTENCE_PAUSE) / 2;
    sentence.push(endsSentence ? `${word}.` : word);
    if (endsSentence) {
      segments.push({ text: sentence.join(' '), start: round(sentenceStart), end: round(tone.end) });
      sentence = [];
      sentenceStart = tones[index + 1]?.start ?? tone.end;
    }
  }
  return { words, segments };
}

/**
 * The speaking speed from the pauses: the shortest ones are word pauses (70 ms at speed 1), or,
 * when even those are clearly longer than a word pause can be at speed 0.5, sentence pauses
 * (every word ended a sentence). Between 0.5 and 2, as the speech model allows; 1 with a single
 * word. (Sentence pauses at speed 2 are as long as word pauses at 0.56: a text of one-word
 * sentences spoken fast is read as words spoken slowly.)
 */
function speedOf(pauses: readonly number[]): number {
  if (pauses.length === 0) return 1;
  const shortest = Math.min(...pauses);
  const typical = percentile(Float64Array.from(pauses.filter((pause) => pause <= shortest * 1.6)), 0.5);
  const speed = typical > (WORD_PAUSE / 0.5) * 1.15 ? SENTENCE_PAUSE / typical : WORD_PAUSE / typical;
  return Math.min(2, Math.max(0.5, speed));
}

/**
 * The voice's family from the median pitch: the speech model speaks female voices around 220 Hz,
 * male ones around 120 Hz and others around 170 Hz, each name within 10%.
 */
function familyOf(tones: readonly Tone[], audio: Waveform): keyof typeof SYLLABLES {
  const step = Math.max(1, tones.length / PITCHED_TONES);
  const pitches: number[] = [];
  for (let at = 0; at < tones.length; at += step) {
    const tone = tones[Math.floor(at)]!;
    const pitch = pitchAt(audio, Math.round(((tone.start + tone.end) / 2) * audio.sampleRate));
    if (pitch !== undefined) pitches.push(pitch);
  }
  if (pitches.length === 0) return 'neutral';
  const voice = percentile(Float64Array.from(pitches), 0.5) / MID_WORD_PITCH;
  if (voice < 145) return 'male';
  if (voice > 195) return 'female';
  return 'neutral';
}

function percentile(values: Float64Array, at: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(at * sorted.length))]!;
}

/** Seconds to the millisecond. */
function round(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}
