/**
 * The Gemini API's REST shapes (`models/{model}:generateContent`, `:streamGenerateContent?alt=sse`),
 * from Google's API reference (ai.google.dev/api/generate-content, ai.google.dev/api/caching) and
 * the `@google/genai` SDK's types. Only what the gateway reads or writes is typed; the API has
 * more (grounding, logprobs, media resolution…). Vertex AI's Gemini endpoints take the same body.
 */

export type GeminiRole = 'user' | 'model';

export interface GeminiContent {
  /** `user` or `model`; the API refuses any other. `systemInstruction` may leave it out. */
  role?: GeminiRole | undefined;
  parts: GeminiPart[];
}

export interface GeminiBlob {
  mimeType: string;
  /** Base64, without a data-URL prefix. */
  data: string;
}

export interface GeminiFileData {
  mimeType?: string | undefined;
  fileUri: string;
}

export interface GeminiFunctionCall {
  /** Newer models name their calls; older ones leave `id` out. */
  id?: string | undefined;
  name: string;
  args?: Record<string, unknown> | undefined;
}

export interface GeminiFunctionResponse {
  id?: string | undefined;
  name: string;
  /** A JSON object; a plain result goes in `{ "output": … }`, an error in `{ "error": … }`. */
  response: Record<string, unknown>;
}

/** One part: exactly one data field (`text`, `inlineData`, `fileData`, `functionCall`, `functionResponse`…). */
export interface GeminiPart {
  text?: string | undefined;
  inlineData?: GeminiBlob | undefined;
  fileData?: GeminiFileData | undefined;
  functionCall?: GeminiFunctionCall | undefined;
  functionResponse?: GeminiFunctionResponse | undefined;
  executableCode?: { language: string; code: string } | undefined;
  codeExecutionResult?: { outcome: string; output?: string | undefined } | undefined;
  /** A thought summary (the text is the model's reasoning, not its answer). */
  thought?: boolean | undefined;
  /**
   * Opaque signature of the model's reasoning, on the part it belongs to (the first
   * `functionCall` of a step, or a text part). Gemini 3 refuses a follow-up turn whose model
   * `functionCall` part lacks the signature it issued.
   */
  thoughtSignature?: string | undefined;
}

export type GeminiSchemaType = 'TYPE_UNSPECIFIED' | 'STRING' | 'NUMBER' | 'INTEGER' | 'BOOLEAN' | 'ARRAY' | 'OBJECT' | 'NULL';

/** Gemini's subset of OpenAPI 3.0 schema (`Schema` in the reference). */
export interface GeminiSchema {
  type?: GeminiSchemaType | undefined;
  format?: string | undefined;
  title?: string | undefined;
  description?: string | undefined;
  nullable?: boolean | undefined;
  enum?: string[] | undefined;
  maxItems?: string | undefined;
  minItems?: string | undefined;
  properties?: Record<string, GeminiSchema> | undefined;
  required?: string[] | undefined;
  minProperties?: string | undefined;
  maxProperties?: string | undefined;
  minLength?: string | undefined;
  maxLength?: string | undefined;
  pattern?: string | undefined;
  example?: unknown;
  anyOf?: GeminiSchema[] | undefined;
  propertyOrdering?: string[] | undefined;
  default?: unknown;
  items?: GeminiSchema | undefined;
  minimum?: number | undefined;
  maximum?: number | undefined;
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string | undefined;
  parameters?: GeminiSchema | undefined;
  /** JSON Schema as is (the alternative to `parameters`; not both). */
  parametersJsonSchema?: unknown;
}

export interface GeminiTool {
  functionDeclarations?: GeminiFunctionDeclaration[] | undefined;
  googleSearch?: Record<string, unknown> | undefined;
  codeExecution?: Record<string, unknown> | undefined;
  urlContext?: Record<string, unknown> | undefined;
}

export type GeminiFunctionCallingMode = 'MODE_UNSPECIFIED' | 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED';

export interface GeminiToolConfig {
  functionCallingConfig?: { mode?: GeminiFunctionCallingMode | undefined; allowedFunctionNames?: string[] | undefined } | undefined;
}

export type GeminiThinkingLevel = 'THINKING_LEVEL_UNSPECIFIED' | 'MINIMAL' | 'LOW' | 'MEDIUM' | 'HIGH';

export interface GeminiThinkingConfig {
  /** Send thought summaries (`thought: true` parts). */
  includeThoughts?: boolean | undefined;
  /** Gemini 2.5: tokens to think with; 0 turns thinking off where the model allows, -1 is dynamic. */
  thinkingBudget?: number | undefined;
  /** Gemini 3: the level instead of a budget (not both). */
  thinkingLevel?: GeminiThinkingLevel | undefined;
}

export interface GeminiGenerationConfig {
  stopSequences?: string[] | undefined;
  responseMimeType?: string | undefined;
  responseSchema?: GeminiSchema | undefined;
  responseJsonSchema?: unknown;
  responseModalities?: string[] | undefined;
  candidateCount?: number | undefined;
  maxOutputTokens?: number | undefined;
  temperature?: number | undefined;
  topP?: number | undefined;
  topK?: number | undefined;
  seed?: number | undefined;
  presencePenalty?: number | undefined;
  frequencyPenalty?: number | undefined;
  responseLogprobs?: boolean | undefined;
  logprobs?: number | undefined;
  thinkingConfig?: GeminiThinkingConfig | undefined;
}

export interface GeminiSafetySetting {
  category: string;
  threshold: string;
}

export interface GeminiGenerateContentRequest {
  contents: GeminiContent[];
  tools?: GeminiTool[] | undefined;
  toolConfig?: GeminiToolConfig | undefined;
  safetySettings?: GeminiSafetySetting[] | undefined;
  systemInstruction?: GeminiContent | undefined;
  generationConfig?: GeminiGenerationConfig | undefined;
  /** `cachedContents/{id}`: a context cached with the caching API. */
  cachedContent?: string | undefined;
}

export type GeminiFinishReason =
  | 'FINISH_REASON_UNSPECIFIED'
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'LANGUAGE'
  | 'OTHER'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'MALFORMED_FUNCTION_CALL'
  | 'IMAGE_SAFETY'
  | 'IMAGE_PROHIBITED_CONTENT'
  | 'IMAGE_OTHER'
  | 'IMAGE_RECITATION'
  | 'NO_IMAGE'
  | 'UNEXPECTED_TOOL_CALL'
  | 'TOO_MANY_TOOL_CALLS'
  | 'MISSING_THOUGHT_SIGNATURE'
  | 'MALFORMED_RESPONSE';

export interface GeminiSafetyRating {
  category: string;
  probability: string;
  blocked?: boolean | undefined;
}

export interface GeminiCandidate {
  content?: GeminiContent | undefined;
  /** Set on the last chunk of a stream (and on a JSON answer). */
  finishReason?: GeminiFinishReason | undefined;
  finishMessage?: string | undefined;
  safetyRatings?: GeminiSafetyRating[] | undefined;
  index?: number | undefined;
  tokenCount?: number | undefined;
}

export interface GeminiModalityTokenCount {
  modality: string;
  tokenCount: number;
}

/**
 * Token counts. `promptTokenCount` counts the whole prompt, the cached part
 * (`cachedContentTokenCount`) included; `candidatesTokenCount` counts the answer without the
 * thinking, which is `thoughtsTokenCount` apart; `toolUsePromptTokenCount` is the prompt of
 * server-side tools. `totalTokenCount` is the sum of prompt, tool-use prompt, candidates and thoughts.
 */
export interface GeminiUsageMetadata {
  promptTokenCount?: number | undefined;
  cachedContentTokenCount?: number | undefined;
  candidatesTokenCount?: number | undefined;
  toolUsePromptTokenCount?: number | undefined;
  thoughtsTokenCount?: number | undefined;
  totalTokenCount?: number | undefined;
  promptTokensDetails?: GeminiModalityTokenCount[] | undefined;
  cacheTokensDetails?: GeminiModalityTokenCount[] | undefined;
  candidatesTokensDetails?: GeminiModalityTokenCount[] | undefined;
}

export type GeminiBlockReason = 'BLOCK_REASON_UNSPECIFIED' | 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT' | 'IMAGE_SAFETY';

/** A JSON answer, and each chunk of a stream (every chunk a whole `GenerateContentResponse`). */
export interface GeminiGenerateContentResponse {
  candidates?: GeminiCandidate[] | undefined;
  /** Set when the prompt itself was blocked (then there are no candidates). */
  promptFeedback?: { blockReason?: GeminiBlockReason | undefined; safetyRatings?: GeminiSafetyRating[] | undefined } | undefined;
  usageMetadata?: GeminiUsageMetadata | undefined;
  modelVersion?: string | undefined;
  responseId?: string | undefined;
}

/** Google's error body (`google.rpc.Status`): HTTP code, message, canonical status name. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: unknown[] | undefined };
}
