import type { CamelCaseFields } from '../../http/top-level-keys.js';
import { isRecord, type Json } from '../../json.js';

/**
 * Google's REST API takes every field in camelCase or snake_case (protobuf's JSON mapping): its
 * own curl samples send `system_instruction` and `inline_data.mime_type`, the SDKs camelCase.
 * The request is read in camelCase after this pass, which renames the keys of the structural
 * objects only: never inside a function call's `args`, a function response or a schema, where
 * the keys are the user's own names.
 */
type Shape = { [camelKey: string]: Shape | ShapeOfEach };
interface ShapeOfEach {
  each: Shape;
}

const part: Shape = { inlineData: {}, fileData: {}, functionCall: {}, functionResponse: {}, videoMetadata: {}, executableCode: {}, codeExecutionResult: {} };
// A function response's own `parts` (files it returns) are parts too; its `response` is the user's.
part.functionResponse = { parts: { each: part } };
const content: Shape = { parts: { each: part } };
const functionDeclaration: Shape = {};
const request: Shape = {
  contents: { each: content },
  systemInstruction: content,
  tools: { each: { functionDeclarations: { each: functionDeclaration } } },
  toolConfig: { functionCallingConfig: {} },
  safetySettings: { each: {} },
  generationConfig: { thinkingConfig: {} },
};

/** The request with its structural keys in camelCase; the same object when nothing needed renaming. */
export function camelCaseRequest(body: Json): Json {
  return renamed(body, request) as Json;
}

function renamed(value: unknown, shape: Shape | ShapeOfEach): unknown {
  if (isShapeOfEach(shape)) {
    if (!Array.isArray(value)) return value;
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const next = renamed(item, shape.each);
      if (next !== item) (copy ??= [...value])[i] = next;
    });
    return copy ?? value;
  }
  if (!isRecord(value)) return value;
  let out: Json | undefined;
  for (const key of Object.keys(value)) {
    const camel = key.includes('_') ? camelOf(key) : key;
    const child = (shape as Shape)[camel];
    const next = child === undefined ? value[key] : renamed(value[key], child);
    if (camel === key && next === value[key]) continue;
    out ??= { ...value };
    if (camel !== key) {
      delete out[key];
      // The camelCase spelling wins when a client sent both.
      if (camel in value) continue;
    }
    out[camel] = next;
  }
  return out ?? value;
}

function isShapeOfEach(shape: Shape | ShapeOfEach): shape is ShapeOfEach {
  return Object.keys(shape).length === 1 && isRecord((shape as ShapeOfEach).each);
}

export function camelOf(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * The top-level fields of Gemini's request bodies (`GenerateContentRequest`, `countTokens`,
 * `embedContent`, `batchEmbedContents`): a key that is another case of one is refused
 * (`http/top-level-keys.ts`).
 */
export const geminiRequestKeys: CamelCaseFields = {
  fields: [
    'model',
    'contents',
    'systemInstruction',
    'tools',
    'toolConfig',
    'safetySettings',
    'generationConfig',
    'cachedContent',
    'labels',
    'generateContentRequest',
    'content',
    'taskType',
    'title',
    'outputDimensionality',
    'requests',
  ],
  camelOf,
};
