import { newId } from '../../ids.js';

/**
 * Gemini's older models give their function calls no id, and clients of every other protocol
 * need one to answer the call. The gateway makes one up with this prefix; it is never sent back
 * to Gemini (a call and its response are then matched by name and order, as Gemini does), while
 * an id Gemini gave is returned as it came.
 */
const SYNTHESIZED_PREFIX = 'call_gm';

export function synthesizeCallId(): string {
  return newId(SYNTHESIZED_PREFIX);
}

export function isSynthesizedCallId(id: string): boolean {
  return id.startsWith(SYNTHESIZED_PREFIX);
}
