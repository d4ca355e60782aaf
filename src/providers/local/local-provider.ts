import { setTimeout as sleep } from 'node:timers/promises';
import { newId, unixSeconds } from '../../ids.js';
import { accumulateStream } from '../../protocols/accumulate.js';
import type { IRRequest, IRStreamEvent, IRUsage } from '../../protocols/ir.js';
import type { ModelEntry } from '../../routing/model.js';
import type { Provider } from '../provider.js';
import { planReply, promptChars, reasoningFor } from './local-answer.js';
import { localEmbeddings } from './local-embeddings.js';
import { localEditImage, localGenerateImage } from './local-images.js';
import { localSpeech } from './local-speech.js';
import { localTranscription } from './local-transcription.js';
import { LocalVideos } from './local-videos.js';

export interface LocalProviderOptions {
  /**
   * Pause between streamed chunks, in milliseconds, so a person sees the answer stream.
   * Default 15; 0 streams as fast as the client reads. JSON answers never wait.
   */
  chunkDelayMs?: number | undefined;
  /**
   * How long a local video task takes, in ms: `queued` for the first fifth, then `in_progress`,
   * then `completed`. Default 6000.
   */
  videoRenderMs?: number | undefined;
}

export const LOCAL_CHAT_MODEL = 'local-chat';
export const LOCAL_REASONER_MODEL = 'local-reasoner';
export const LOCAL_IMAGE_MODEL = 'local-image';
export const LOCAL_VIDEO_MODEL = 'local-video';
/** The single speech model (spec 2.10); voices like `en_female_anna_v1`. */
export const LOCAL_SPEECH_MODEL = 'local-speech';
/** Deterministic feature-hashed vectors, 256 dimensions unless `dimensions` asks otherwise. */
export const LOCAL_EMBEDDING_MODEL = 'local-embedding';
/** Reads back what `local-speech` says (WAV, MP3, Ogg Opus): its words, timings and voice family. */
export const LOCAL_TRANSCRIPTION_MODEL = 'local-transcription';

/**
 * The embedded, offline provider: deterministic text models that answer about the prompt they
 * received, stream in several chunks and call a tool when the prompt asks for one, so every
 * protocol and a whole tool loop can be tried with no account (see `local-answer.ts`).
 * Usage is estimated at one token per four characters. A model whose upstream id contains
 * `reasoner` first thinks aloud (a reasoning part), then answers.
 */
export function createLocalProvider(options: LocalProviderOptions = {}): Provider {
  const chunkDelayMs = options.chunkDelayMs ?? 15;
  if (typeof chunkDelayMs !== 'number' || !Number.isFinite(chunkDelayMs) || chunkDelayMs < 0) {
    throw new TypeError(`createLocalProvider: chunkDelayMs must be a number >= 0, got ${String(chunkDelayMs)}`);
  }
  const videoRenderMs = options.videoRenderMs ?? 6000;
  if (!Number.isInteger(videoRenderMs) || videoRenderMs < 0) {
    throw new TypeError(`createLocalProvider: videoRenderMs must be an integer >= 0, got ${String(videoRenderMs)}`);
  }
  const videos = new LocalVideos(videoRenderMs);
  return {
    type: 'local',
    version: 2,
    text: {
      // No upstream to wait on: all of an offline answer's time before its first event is the gateway's.
      stream: function localStreamText(request, call) {
        call.upstreamWait?.waited(0);
        return localStream(request, call.signal, chunkDelayMs);
      },
      generate: function localGenerateText(request, call) {
        call.upstreamWait?.waited(0);
        return accumulateStream(localStream(request, call.signal, 0));
      },
    },
    images: {
      generate: async function localGenerateImages(request) {
        return localGenerateImage(request);
      },
      edit: async function localEditImages(request) {
        return localEditImage(request);
      },
    },
    speech: {
      synthesize: async function localSynthesizeSpeech(request, call) {
        return localSpeech(request, call.signal);
      },
    },
    video: {
      create: async function localCreateVideo(request) {
        return videos.create(request);
      },
      get: async function localGetVideo(job) {
        return videos.status(job);
      },
      content: async function localVideoContent(job, { range }) {
        return videos.content(job, range);
      },
    },
    embeddings: {
      embed: async function localEmbed(request) {
        return localEmbeddings(request);
      },
    },
    transcriptions: {
      transcribe: async function localTranscribe(request, call) {
        return localTranscription(request, call.signal);
      },
    },
  };
}

/** The local provider's catalog entries, served by the provider named `providerName`. */
export function localModels(providerName: string): ModelEntry[] {
  return [
    { id: LOCAL_CHAT_MODEL, provider: providerName },
    { id: LOCAL_REASONER_MODEL, provider: providerName },
    { id: LOCAL_IMAGE_MODEL, provider: providerName, kind: 'image' },
    { id: LOCAL_VIDEO_MODEL, provider: providerName, kind: 'video' },
    { id: LOCAL_SPEECH_MODEL, provider: providerName, kind: 'speech' },
    { id: LOCAL_EMBEDDING_MODEL, provider: providerName, kind: 'embedding' },
    { id: LOCAL_TRANSCRIPTION_MODEL, provider: providerName, kind: 'transcription' },
  ];
}

async function* localStream(request: IRRequest, signal: AbortSignal, chunkDelayMs: number): AsyncGenerator<IRStreamEvent> {
  if (signal.aborted) throw abortError(signal);
  const reply = planReply(request);
  const input = Math.ceil(promptChars(request) / 4);
  yield { type: 'start', id: newId('local_'), model: request.model, created: unixSeconds(), usage: { input } };

  // Tokens are estimated as ceil(chars / 4), so `maxOutputTokens * 4` characters always fit.
  const output = { budget: request.maxOutputTokens === undefined ? Infinity : request.maxOutputTokens * 4, cut: false };
  /** The part of `text` the output budget still allows; a cut ends the answer with `length`. */
  const fit = (text: string): string => {
    const kept = cutAt(text, output.budget);
    output.budget -= kept.length;
    if (kept.length < text.length) output.cut = true;
    return kept;
  };
  let first = true;
  /** Waits between chunks (never before the first) and notices an abort promptly. */
  const pace = async (): Promise<void> => {
    if (!first && chunkDelayMs > 0) await sleep(chunkDelayMs, undefined, { signal });
    first = false;
    if (signal.aborted) throw abortError(signal);
  };
  const reasoner = request.model.includes('reasoner');
  let reasoningChars = 0;
  let answerChars = 0;
  let stop: { index: number; sequence: string } | undefined;

  if (reasoner) {
    const thought = fit(reasoningFor(reply, request));
    for (const chunk of wordChunks(thought)) {
      await pace();
      yield { type: 'reasoning_delta', text: chunk };
    }
    if (thought) yield { type: 'reasoning_end' };
    reasoningChars = thought.length;
  }

  if (output.cut) {
    // Out of budget while thinking: nothing more is said.
  } else if (reply.kind === 'tool_call') {
    // A tool call is all or nothing: half a JSON object would be of no use to the client.
    const size = reply.name.length + reply.arguments.length;
    if (size > output.budget) {
      output.cut = true;
    } else {
      answerChars = size;
      await pace();
      yield { type: 'tool_call_start', id: reply.id, name: reply.name };
      for (const fragment of fragments(reply.arguments, 3)) {
        await pace();
        yield { type: 'tool_call_delta', arguments: fragment };
      }
    }
  } else {
    stop = earliestStop(reply.text, request.stop);
    const text = fit(stop ? reply.text.slice(0, stop.index) : reply.text);
    answerChars = text.length;
    for (const chunk of wordChunks(text)) {
      await pace();
      yield { type: 'text_delta', text: chunk };
    }
  }

  if (signal.aborted) throw abortError(signal);
  const usage: IRUsage = { input, output: Math.ceil((reasoningChars + answerChars) / 4) };
  if (reasoner) usage.reasoning = Math.ceil(reasoningChars / 4);
  if (output.cut) yield { type: 'finish', reason: 'length', usage };
  else if (stop) yield { type: 'finish', reason: 'stop_sequence', stopSequence: stop.sequence, usage };
  else yield { type: 'finish', reason: reply.kind === 'tool_call' ? 'tool_calls' : 'stop', usage };
}

/** Word-aligned chunks of at least a dozen characters, so the answer streams in several pieces. */
function wordChunks(text: string): string[] {
  const chunks: string[] = [];
  let chunk = '';
  for (const word of text.match(/\s*\S+\s*/g) ?? []) {
    chunk += word;
    if (chunk.length >= 12) {
      chunks.push(chunk);
      chunk = '';
    }
  }
  if (chunk) chunks.push(chunk);
  return chunks;
}

/** `text` in up to `count` pieces of about equal length, never splitting a character. */
function fragments(text: string, count: number): string[] {
  const characters = Array.from(text);
  const size = Math.max(1, Math.ceil(characters.length / count));
  const pieces: string[] = [];
  for (let index = 0; index < characters.length; index += size) pieces.push(characters.slice(index, index + size).join(''));
  return pieces;
}

/** The first `length` UTF-16 units of `text`, one fewer rather than half a surrogate pair. */
function cutAt(text: string, length: number): string {
  const kept = text.slice(0, length);
  return kept.length < text.length && /[\uD800-\uDBFF]$/.test(kept) ? kept.slice(0, -1) : kept;
}

function earliestStop(text: string, stops: readonly string[] | undefined): { index: number; sequence: string } | undefined {
  let earliest: { index: number; sequence: string } | undefined;
  for (const sequence of stops ?? []) {
    if (!sequence) continue;
    const index = text.indexOf(sequence);
    if (index >= 0 && (!earliest || index < earliest.index)) earliest = { index, sequence };
  }
  return earliest;
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException('The operation was aborted.', 'AbortError');
}
