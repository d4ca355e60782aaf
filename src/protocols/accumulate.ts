import { mergeUsage, type IRAssistantPart, type IRResponse, type IRStreamEvent, type IRUsage } from './ir.js';

/**
 * Folds an IR event stream into one `IRResponse`, for a client that asked for JSON from a
 * provider that only streams. Parts stay in emission order; consecutive deltas of one kind
 * extend the open part.
 */
export async function accumulateStream(events: AsyncIterable<IRStreamEvent>): Promise<IRResponse> {
  const fold = new EventFold();
  for await (const event of events) fold.push(event);
  return fold.response();
}

/** The fold itself, synchronous: for decoders that read a whole answer as a list of events. */
export class EventFold {
  private readonly content: IRAssistantPart[] = [];
  private open: IRAssistantPart | undefined;
  private usage: IRUsage = {};
  private head: { id: string; model: string; created: number } | undefined;
  private finish: Extract<IRStreamEvent, { type: 'finish' }> | undefined;

  push(event: IRStreamEvent): void {
    const open = this.open;
    switch (event.type) {
      case 'start':
        this.head = { id: event.id, model: event.model, created: event.created };
        this.usage = mergeUsage(this.usage, event.usage);
        break;
      case 'text_delta': {
        const part = open?.type === 'text' ? open : this.openPart({ type: 'text', text: '' });
        (part as { text: string }).text += event.text;
        break;
      }
      case 'refusal_delta': {
        const part = open?.type === 'refusal' ? open : this.openPart({ type: 'refusal', refusal: '' });
        (part as { refusal: string }).refusal += event.text;
        break;
      }
      case 'reasoning_delta': {
        const part = open?.type === 'reasoning' ? open : this.openPart({ type: 'reasoning', text: '', ...(event.id ? { id: event.id } : {}) });
        (part as { text: string }).text += event.text;
        break;
      }
      case 'reasoning_end': {
        const part = open?.type === 'reasoning' ? open : this.openPart({ type: 'reasoning', text: '' });
        if (part.type === 'reasoning') {
          if (event.signature !== undefined) part.signature = event.signature;
          if (event.redacted !== undefined) part.redacted = event.redacted;
          if (event.encrypted !== undefined) part.encrypted = event.encrypted;
          if (event.thoughtSignature !== undefined) part.thoughtSignature = event.thoughtSignature;
          if (event.id !== undefined) part.id ??= event.id;
        }
        this.open = undefined;
        break;
      }
      case 'tool_call_start':
        this.openPart({ type: 'tool_call', id: event.id, name: event.name, arguments: '' });
        break;
      case 'tool_call_delta':
        if (open?.type === 'tool_call') open.arguments += event.arguments;
        break;
      case 'usage':
        this.usage = mergeUsage(this.usage, event.usage);
        break;
      case 'finish':
        this.usage = mergeUsage(this.usage, event.usage);
        this.finish = event;
        break;
    }
  }

  response(): IRResponse {
    const { head, finish } = this;
    if (!head || !finish) throw new Error('IR stream ended without start or finish');
    return {
      id: head.id,
      model: head.model,
      created: head.created,
      content: this.content,
      finishReason: finish.reason,
      stopSequence: finish.stopSequence,
      usage: this.usage,
    };
  }

  private openPart(part: IRAssistantPart): IRAssistantPart {
    this.content.push(part);
    this.open = part;
    return part;
  }
}
