import type { IRContentPart, IRFilePart, IRRequest } from '../protocols/ir.js';
import { imageTokens, type ImageFormula } from './image-tokens.js';
import { encodingFor, TokenCounter } from './tokenizer.js';

/**
 * The input tokens of a request, counted here for an upstream that cannot count them itself:
 * system instructions, every message (text, tool calls and their results, reasoning text),
 * tool definitions and images. Text uses the upstream model's OpenAI encoding (`o200k_base` for
 * models outside OpenAI's, Claude included: an estimate, see `tokenizer.ts`); each message adds
 * the 3 tokens of OpenAI's chat framing, and the reply's priming 3 more. Images follow their
 * vendor's formula (`image-tokens.ts`). Opaque reasoning (signatures, encrypted content) is not
 * counted, as neither vendor counts it again.
 */
export async function countRequestTokens(request: IRRequest): Promise<number> {
  const counter = await TokenCounter.open(encodingFor(request.model));
  const formula: ImageFormula = /claude/i.test(request.model) ? 'anthropic' : 'openai';
  let total = REPLY_PRIMING;

  const system = request.system.map((part) => part.text).join('\n');
  if (system !== '') total += MESSAGE_FRAMING + (await counter.count(system));

  for (const message of request.messages) {
    total += MESSAGE_FRAMING;
    if (message.role === 'assistant') {
      for (const part of message.content) {
        if (part.type === 'text') total += await counter.count(part.text);
        else if (part.type === 'refusal') total += await counter.count(part.refusal);
        else if (part.type === 'reasoning') total += await counter.count(part.text);
        else total += (await counter.count(part.name)) + (await counter.count(part.arguments));
      }
    } else {
      total += await countContent(message.content, counter, formula);
    }
  }

  for (const tool of request.tools ?? []) {
    const definition = {
      name: tool.name,
      // An empty description is counted as none.
      description: tool.description || undefined,
      parameters: tool.parameters,
    };
    total += TOOL_FRAMING + (await counter.count(JSON.stringify(definition)));
  }
  return total;
}

/** `<|start|>role<|message|>…<|end|>` around each message. */
const MESSAGE_FRAMING = 3;
/** `<|start|>assistant<|message|>` before the answer. */
const REPLY_PRIMING = 3;
/** The namespace and function wrapper each tool definition is rendered in. */
const TOOL_FRAMING = 8;

async function countContent(parts: readonly IRContentPart[], counter: TokenCounter, formula: ImageFormula): Promise<number> {
  let total = 0;
  for (const part of parts) {
    if (part.type === 'text') total += await counter.count(part.text);
    else if (part.type === 'image') total += imageTokens(part, formula);
    else total += await fileTokens(part, counter);
  }
  return total;
}

/**
 * A text file (`text/*`, JSON, XML) is counted as its text. Other files (PDFs: text and page
 * images) have no formula that holds without rendering them: estimated at one token per 10 bytes,
 * and 1,000 tokens when only a file id or URL is given.
 */
async function fileTokens(file: IRFilePart, counter: TokenCounter): Promise<number> {
  const name = file.filename ? await counter.count(file.filename) : 0;
  if (!file.data) return name + 1000;
  const bytes = Buffer.from(file.data, 'base64');
  if (/^text\/|\/(json|xml)\b/.test(file.mediaType ?? '')) return name + (await counter.count(bytes.toString('utf8')));
  return name + Math.ceil(bytes.length / 10);
}
