/**
 * SSE framing shared by the three stream encoders, so every frame is built one way.
 * `JSON.stringify` escapes newlines, so each payload fits on one `data:` line.
 */

/** A data-only frame (Chat Completions sends no `event:` lines). */
export function sseData(json: unknown): string {
  return `data: ${JSON.stringify(json)}\n\n`;
}

/**
 * A named frame. Responses repeats `data.type` in `event:` by convention; the Anthropic SDK
 * needs it (it dispatches on the event name and drops frames without one).
 */
export function sseEvent(type: string, json: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(json)}\n\n`;
}

/** The Chat Completions terminator; the OpenAI SDKs stop reading at it. */
export const SSE_DONE = 'data: [DONE]\n\n';
