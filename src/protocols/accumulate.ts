import { mergeUsage, type IRAssistantPart, type IRResponse, type IRStreamEvent, type IRUsage } from './ir.js';

/**
 * Folds an IR event stream into one `IRResponse`, for a client that asked for JSON from a
 * provider that only streams. Parts stay in emission order; consecutive deltas of one kind
 * extend the open part.
 */
export async function accumulateStream(events: AsyncIterable<IRStreamEvent>): Promise<IRResponse> {
  const content: IRAssistantPart[] = [];
  let open: IRAssistantPart | undefined;
  let usage: IRUsage = {};
  let head: { id: string; model: string; created: number } | undefined;
  let finish: Extract<IRStreamEvent, { type: 'finish' }> | undefined;

  const openPart = (part: IRAssistantPart): IRAssistantPart => {
    content.push(part);
    open = part;
    return part;
  };

  for await (const event of events) {
    switch (event.type) {
      case 'start':
        head = { id: event.id, model: event.model, created: event.created };
        usage = mergeUsage(usage, event.usage);
        break;
      case 'text_delta': {
        const part = open?.type === 'text' ? open : openPart({ type: 'text', text: '' });
        (part as { text: string }).text += event.text;
        break;
      }
      case 'refusal_delta': {
        const part = open?.type === 'refusal' ? open : openPart({ type: 'refusal', refusal: '' });
        (part as { refusal: string }).refusal += event.text;
        break;
      }
      case 'reasoning_delta': {
        const part = open?.type === 'reasoning' ? open : openPart({ type: 'reasoning', text: '' });
        (part as { text: string }).text += event.text;
        break;
      }
      case 'reasoning_end': {
        const part = open?.type === 'reasoning' ? open : openPart({ type: 'reasoning', text: '' });
        if (part.type === 'reasoning') {
          if (event.signature !== undefined) part.signature = event.signature;
          if (event.redacted !== undefined) part.redacted = event.redacted;
          if (event.encrypted !== undefined) part.encrypted = event.encrypted;
        }
        open = undefined;
        break;
      }
      case 'tool_call_start':
        openPart({ type: 'tool_call', id: event.id, name: event.name, arguments: '' });
        break;
      case 'tool_call_delta':
        if (open?.type === 'tool_call') open.arguments += event.arguments;
        break;
      case 'usage':
        usage = mergeUsage(usage, event.usage);
        break;
      case 'finish':
        usage = mergeUsage(usage, event.usage);
        finish = event;
        break;
    }
  }

  if (!head || !finish) throw new Error('IR stream ended without start or finish');
  return {
    id: head.id,
    model: head.model,
    created: head.created,
    content,
    finishReason: finish.reason,
    stopSequence: finish.stopSequence,
    usage,
  };
}
