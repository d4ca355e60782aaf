import { beforeAll, describe, expect, it } from 'vitest';
import type { GenericSchema } from 'valibot';
import { GatewayError } from '../../src/errors.js';
import type { Gateway } from '../../src/gateway.js';
import { chatRequestSchema } from '../../src/protocols/chat/schema.js';
import { checkEditFiles, imageEditFieldsSchema, type EditFile } from '../../src/schemas/image-edit.js';
import { imageRequestSchema } from '../../src/schemas/images.js';
import { messagesRequestSchema } from '../../src/protocols/messages/schema.js';
import { responsesRequestSchema } from '../../src/protocols/responses/schema.js';
import { speechRequestSchema, VOICE_PATTERN } from '../../src/schemas/speech.js';
import { validateBody } from '../../src/schemas/validate.js';
import { videoRequestSchema } from '../../src/schemas/video.js';

/**
 * One row per rule of the spec's sections 2 and 8, run twice: through `validateBody` directly
 * and through the HTTP handler (`gateway.fetch`), which must answer the same 400.
 */

type Endpoint = 'responses' | 'chat' | 'messages' | 'images' | 'edits' | 'video' | 'speech';

const endpoints: Record<Endpoint, { schema: GenericSchema; path: string; base: Record<string, unknown> }> = {
  responses: { schema: responsesRequestSchema, path: '/v1/responses', base: { model: 'm-text', input: 'hi' } },
  chat: {
    schema: chatRequestSchema,
    path: '/v1/chat/completions',
    base: { model: 'm-text', messages: [{ role: 'user', content: 'hi' }] },
  },
  messages: {
    schema: messagesRequestSchema,
    path: '/v1/messages',
    base: { model: 'm-text', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
  },
  images: { schema: imageRequestSchema, path: '/v1/images/generations', base: { model: 'm-image', prompt: 'a cat' } },
  edits: { schema: imageEditFieldsSchema, path: '/v1/images/edits', base: { model: 'm-image', prompt: 'add a hat' } },
  video: { schema: videoRequestSchema, path: '/v1/video/generations', base: { model: 'm-video', prompt: 'a cat' } },
  speech: {
    schema: speechRequestSchema,
    path: '/v1/audio/speech',
    base: { model: 'm-speech', input: 'hello', voice: 'en_female_anna_v1' },
  },
};

const DROP = Symbol('drop');

/** The endpoint's valid base body with `patch` applied; a `DROP` value removes the key. */
function body(endpoint: Endpoint, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = structuredClone(endpoints[endpoint].base);
  for (const [key, value] of Object.entries(patch)) {
    if (value === DROP) delete out[key];
    else out[key] = value;
  }
  return out;
}

interface Rejected {
  endpoint: Endpoint;
  /** What the row checks, in the spec's words. */
  rule: string;
  patch: Record<string, unknown>;
  param: string;
  /** Default: `invalid_value` (the message then says "expected …"). */
  missing?: boolean;
  /** What the message must say was expected. */
  expected?: RegExp;
}

const INT_GE_1 = /expected an integer greater than or equal to 1/;
const STRING = /expected a string/;
const BOOLEAN = /expected a boolean/;
const OBJECT = /expected an object/;
const N_RANGE = /expected an integer from 1 to 128/;
const SECONDS = /expected an integer from 1 to 3600/;
const SPEED = /expected a number from 0\.5 to 2\.0/;
const VOICE = /<language>_<gender>_<name>_<variant>/;
const tooManyImages = Array.from({ length: 11 }, (_, i) => `https://example.com/${i}.png`);

const rejected: Rejected[] = [
  // 2.2 ResponseRequest
  { endpoint: 'responses', rule: 'model required', patch: { model: DROP }, param: 'model', missing: true },
  { endpoint: 'responses', rule: 'model is a string', patch: { model: 42 }, param: 'model', expected: /expected a model id/ },
  { endpoint: 'responses', rule: 'input required', patch: { input: DROP }, param: 'input', missing: true },
  { endpoint: 'responses', rule: 'input null counts as missing', patch: { input: null }, param: 'input', missing: true },
  { endpoint: 'responses', rule: 'instructions is a string', patch: { instructions: 1 }, param: 'instructions', expected: STRING },
  { endpoint: 'responses', rule: 'previous_response_id is a string', patch: { previous_response_id: 7 }, param: 'previous_response_id', expected: STRING },
  { endpoint: 'responses', rule: 'tools is an array', patch: { tools: { type: 'function' } }, param: 'tools', expected: /expected an array of objects/ },
  { endpoint: 'responses', rule: 'tools items are objects', patch: { tools: ['web_search'] }, param: 'tools[0]', expected: OBJECT },
  { endpoint: 'responses', rule: 'reasoning is an object', patch: { reasoning: 'high' }, param: 'reasoning', expected: OBJECT },
  { endpoint: 'responses', rule: 'reasoning is not an array', patch: { reasoning: [] }, param: 'reasoning', expected: OBJECT },
  { endpoint: 'responses', rule: 'prompt_cache_key is a string', patch: { prompt_cache_key: 5 }, param: 'prompt_cache_key', expected: STRING },
  { endpoint: 'responses', rule: 'prompt_cache_options is an object', patch: { prompt_cache_options: 'x' }, param: 'prompt_cache_options', expected: OBJECT },
  {
    endpoint: 'responses',
    rule: 'prompt_cache_retention is a string',
    patch: { prompt_cache_retention: 24 },
    param: 'prompt_cache_retention',
    expected: STRING,
  },
  { endpoint: 'responses', rule: 'stream is a boolean', patch: { stream: 'true' }, param: 'stream', expected: BOOLEAN },
  { endpoint: 'responses', rule: 'max_output_tokens min 1 (0)', patch: { max_output_tokens: 0 }, param: 'max_output_tokens', expected: INT_GE_1 },
  { endpoint: 'responses', rule: 'max_output_tokens is an integer (1.5)', patch: { max_output_tokens: 1.5 }, param: 'max_output_tokens', expected: INT_GE_1 },
  { endpoint: 'responses', rule: 'max_output_tokens is a number ("10")', patch: { max_output_tokens: '10' }, param: 'max_output_tokens', expected: INT_GE_1 },
  { endpoint: 'responses', rule: 'store is a boolean', patch: { store: 1 }, param: 'store', expected: BOOLEAN },
  { endpoint: 'responses', rule: 'metadata is an object', patch: { metadata: 'x' }, param: 'metadata', expected: OBJECT },
  { endpoint: 'responses', rule: 'truncation auto|disabled', patch: { truncation: 'x' }, param: 'truncation', expected: /expected one of 'auto', 'disabled'/ },
  { endpoint: 'responses', rule: 'parallel_tool_calls is a boolean', patch: { parallel_tool_calls: 'yes' }, param: 'parallel_tool_calls', expected: BOOLEAN },
  { endpoint: 'responses', rule: 'include is an array of strings', patch: { include: [1] }, param: 'include[0]', expected: STRING },
  { endpoint: 'responses', rule: 'text is an object', patch: { text: 'low' }, param: 'text', expected: OBJECT },
  { endpoint: 'responses', rule: 'client_metadata is an object', patch: { client_metadata: 'x' }, param: 'client_metadata', expected: OBJECT },

  // 2.3 ChatRequest
  { endpoint: 'chat', rule: 'model required', patch: { model: DROP }, param: 'model', missing: true },
  { endpoint: 'chat', rule: 'messages required', patch: { messages: DROP }, param: 'messages', missing: true },
  { endpoint: 'chat', rule: 'messages is an array', patch: { messages: 'hi' }, param: 'messages', expected: /expected a non-empty array of messages/ },
  { endpoint: 'chat', rule: 'messages not empty', patch: { messages: [] }, param: 'messages', expected: /expected a non-empty array of messages/ },
  { endpoint: 'chat', rule: 'messages items are objects', patch: { messages: ['hi'] }, param: 'messages[0]', expected: OBJECT },
  { endpoint: 'chat', rule: 'messages[].role required', patch: { messages: [{ content: 'hi' }] }, param: 'messages[0].role', missing: true },
  { endpoint: 'chat', rule: 'messages[].role is a string', patch: { messages: [{ role: 1, content: 'hi' }] }, param: 'messages[0].role', expected: STRING },
  {
    endpoint: 'chat',
    rule: 'messages[].content required (without tool_calls)',
    patch: { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant' }] },
    param: 'messages[1].content',
    missing: true,
  },
  { endpoint: 'chat', rule: 'stream is a boolean', patch: { stream: 'yes' }, param: 'stream', expected: BOOLEAN },
  { endpoint: 'chat', rule: 'stream_options is an object', patch: { stream_options: true }, param: 'stream_options', expected: OBJECT },
  { endpoint: 'chat', rule: 'tools is an array of objects', patch: { tools: {} }, param: 'tools', expected: /expected an array of objects/ },
  { endpoint: 'chat', rule: 'reasoning_effort is a string', patch: { reasoning_effort: 1 }, param: 'reasoning_effort', expected: STRING },
  { endpoint: 'chat', rule: 'max_tokens min 1', patch: { max_tokens: 0 }, param: 'max_tokens', expected: INT_GE_1 },
  { endpoint: 'chat', rule: 'max_tokens is an integer', patch: { max_tokens: 2.5 }, param: 'max_tokens', expected: INT_GE_1 },
  { endpoint: 'chat', rule: 'max_completion_tokens min 1', patch: { max_completion_tokens: 0 }, param: 'max_completion_tokens', expected: INT_GE_1 },
  { endpoint: 'chat', rule: 'temperature is a number', patch: { temperature: 'hot' }, param: 'temperature', expected: /expected a number/ },
  { endpoint: 'chat', rule: 'top_p is a number', patch: { top_p: '1' }, param: 'top_p', expected: /expected a number/ },

  // 2.4 MessageRequest
  { endpoint: 'messages', rule: 'model required', patch: { model: DROP }, param: 'model', missing: true },
  { endpoint: 'messages', rule: 'max_tokens required', patch: { max_tokens: DROP }, param: 'max_tokens', missing: true },
  { endpoint: 'messages', rule: 'max_tokens min 1', patch: { max_tokens: 0 }, param: 'max_tokens', expected: INT_GE_1 },
  { endpoint: 'messages', rule: 'max_tokens is an integer', patch: { max_tokens: '16' }, param: 'max_tokens', expected: INT_GE_1 },
  { endpoint: 'messages', rule: 'messages required', patch: { messages: DROP }, param: 'messages', missing: true },
  { endpoint: 'messages', rule: 'messages not empty', patch: { messages: [] }, param: 'messages', expected: /expected a non-empty array of messages/ },
  {
    endpoint: 'messages',
    rule: 'role user|assistant|system',
    patch: { messages: [{ role: 'tool', content: 'x' }] },
    param: 'messages[0].role',
    expected: /expected 'user', 'assistant' or 'system'/,
  },
  { endpoint: 'messages', rule: 'messages[].content required', patch: { messages: [{ role: 'user' }] }, param: 'messages[0].content', missing: true },
  {
    endpoint: 'messages',
    rule: 'assistant content required',
    patch: { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant' }] },
    param: 'messages[1].content',
    missing: true,
  },
  { endpoint: 'messages', rule: 'tools[].name required', patch: { tools: [{ input_schema: { type: 'object' } }] }, param: 'tools[0].name', missing: true },
  { endpoint: 'messages', rule: 'custom tool needs input_schema', patch: { tools: [{ name: 'f' }] }, param: 'tools[0].input_schema', missing: true },
  {
    endpoint: 'messages',
    rule: 'type custom tool needs input_schema',
    patch: { tools: [{ type: 'custom', name: 'f' }] },
    param: 'tools[0].input_schema',
    missing: true,
  },
  {
    endpoint: 'messages',
    rule: 'input_schema is an object',
    patch: { tools: [{ name: 'f', input_schema: 'x' }] },
    param: 'tools[0].input_schema',
    expected: OBJECT,
  },
  { endpoint: 'messages', rule: 'tools is an array', patch: { tools: { name: 'f' } }, param: 'tools', expected: /expected an array of tool definitions/ },
  { endpoint: 'messages', rule: 'thinking is an object', patch: { thinking: 'on' }, param: 'thinking', expected: OBJECT },
  { endpoint: 'messages', rule: 'stream is a boolean', patch: { stream: 1 }, param: 'stream', expected: BOOLEAN },

  // 2.5 ImageRequest + 8
  { endpoint: 'images', rule: 'model required', patch: { model: DROP }, param: 'model', missing: true },
  { endpoint: 'images', rule: 'prompt required', patch: { prompt: DROP }, param: 'prompt', missing: true },
  { endpoint: 'images', rule: 'prompt is a string', patch: { prompt: ['a cat'] }, param: 'prompt', expected: STRING },
  { endpoint: 'images', rule: 'n min 1', patch: { n: 0 }, param: 'n', expected: N_RANGE },
  { endpoint: 'images', rule: 'n max 128', patch: { n: 129 }, param: 'n', expected: N_RANGE },
  { endpoint: 'images', rule: 'n is an integer', patch: { n: 1.5 }, param: 'n', expected: N_RANGE },
  { endpoint: 'images', rule: 'n is a number', patch: { n: '1' }, param: 'n', expected: N_RANGE },
  { endpoint: 'images', rule: 'image string or array', patch: { image: 5 }, param: 'image', expected: /expected a string or an array of 1 to 10 strings/ },
  { endpoint: 'images', rule: 'image array min 1', patch: { image: [] }, param: 'image', expected: /an array of 1 to 10 strings/ },
  { endpoint: 'images', rule: 'image array max 10', patch: { image: tooManyImages }, param: 'image', expected: /an array of 1 to 10 strings/ },
  { endpoint: 'images', rule: 'image items are strings', patch: { image: ['a', 'b', 'c', 4] }, param: 'image[3]', expected: STRING },
  { endpoint: 'images', rule: 'size is a string', patch: { size: 1024 }, param: 'size', expected: STRING },
  { endpoint: 'images', rule: 'quality is a string', patch: { quality: 1 }, param: 'quality', expected: STRING },
  { endpoint: 'images', rule: 'response_format is a string', patch: { response_format: null }, param: 'response_format', expected: STRING },
  { endpoint: 'images', rule: 'output_format is a string', patch: { output_format: 1 }, param: 'output_format', expected: STRING },
  {
    endpoint: 'images',
    rule: 'output_compression is an integer',
    patch: { output_compression: 50.5 },
    param: 'output_compression',
    expected: /expected an integer/,
  },
  { endpoint: 'images', rule: 'stream is a boolean', patch: { stream: 'true' }, param: 'stream', expected: BOOLEAN },
  { endpoint: 'images', rule: 'partial_images is an integer', patch: { partial_images: 1.5 }, param: 'partial_images', expected: /expected an integer/ },
  { endpoint: 'images', rule: 'watermark is a boolean', patch: { watermark: 'false' }, param: 'watermark', expected: BOOLEAN },

  // 2.6 ImageEditRequest (text fields of the multipart form)
  { endpoint: 'edits', rule: 'model required', patch: { model: DROP }, param: 'model', missing: true },
  { endpoint: 'edits', rule: 'prompt required', patch: { prompt: DROP }, param: 'prompt', missing: true },
  { endpoint: 'edits', rule: 'n min 1', patch: { n: '0' }, param: 'n', expected: N_RANGE },
  { endpoint: 'edits', rule: 'n max 128', patch: { n: '129' }, param: 'n', expected: N_RANGE },
  { endpoint: 'edits', rule: 'n is an integer', patch: { n: '1.5' }, param: 'n', expected: N_RANGE },
  { endpoint: 'edits', rule: 'n is a number', patch: { n: 'two' }, param: 'n', expected: N_RANGE },
  { endpoint: 'edits', rule: 'stream true|false', patch: { stream: 'yes' }, param: 'stream', expected: /expected 'true' or 'false'/ },
  { endpoint: 'edits', rule: 'partial_images is an integer', patch: { partial_images: 'x' }, param: 'partial_images', expected: /expected an integer/ },

  // 2.8 VideoRequest + 8
  { endpoint: 'video', rule: 'model required', patch: { model: DROP }, param: 'model', missing: true },
  { endpoint: 'video', rule: 'prompt required', patch: { prompt: DROP }, param: 'prompt', missing: true },
  { endpoint: 'video', rule: 'duration min 1', patch: { duration: 0 }, param: 'duration', expected: SECONDS },
  { endpoint: 'video', rule: 'duration max 3600', patch: { duration: 3601 }, param: 'duration', expected: SECONDS },
  { endpoint: 'video', rule: 'duration is an integer', patch: { duration: 1.5 }, param: 'duration', expected: SECONDS },
  { endpoint: 'video', rule: 'seconds min 1', patch: { seconds: 0 }, param: 'seconds', expected: SECONDS },
  { endpoint: 'video', rule: 'seconds max 3600', patch: { seconds: 3601 }, param: 'seconds', expected: SECONDS },
  { endpoint: 'video', rule: 'numeric seconds string min 1', patch: { seconds: '0' }, param: 'seconds', expected: SECONDS },
  { endpoint: 'video', rule: 'numeric seconds string max 3600', patch: { seconds: '3601' }, param: 'seconds', expected: SECONDS },
  { endpoint: 'video', rule: 'numeric seconds string is an integer', patch: { seconds: '2.5' }, param: 'seconds', expected: SECONDS },
  {
    endpoint: 'video',
    rule: 'seconds integer or string',
    patch: { seconds: true },
    param: 'seconds',
    expected: /expected an integer from 1 to 3600, or a string/,
  },
  { endpoint: 'video', rule: 'image is a string', patch: { image: ['a'] }, param: 'image', expected: STRING },
  { endpoint: 'video', rule: 'images is an array', patch: { images: 'a' }, param: 'images', expected: /expected an array of strings/ },
  { endpoint: 'video', rule: 'images items are strings', patch: { images: ['a', 2] }, param: 'images[1]', expected: STRING },
  { endpoint: 'video', rule: 'size is a string', patch: { size: 720 }, param: 'size', expected: STRING },
  { endpoint: 'video', rule: 'metadata is an object', patch: { metadata: 'x' }, param: 'metadata', expected: OBJECT },
  { endpoint: 'video', rule: 'metadata.resolution is a string', patch: { metadata: { resolution: 720 } }, param: 'metadata.resolution', expected: STRING },
  { endpoint: 'video', rule: 'metadata.ratio is a string', patch: { metadata: { ratio: 1.77 } }, param: 'metadata.ratio', expected: STRING },
  {
    endpoint: 'video',
    rule: 'metadata.content is an array',
    patch: { metadata: { content: 'x' } },
    param: 'metadata.content',
    expected: /expected an array of objects/,
  },
  { endpoint: 'video', rule: 'metadata.content items are objects', patch: { metadata: { content: [1] } }, param: 'metadata.content[0]', expected: OBJECT },
  {
    endpoint: 'video',
    rule: 'metadata.generate_audio is a boolean',
    patch: { metadata: { generate_audio: 'yes' } },
    param: 'metadata.generate_audio',
    expected: BOOLEAN,
  },
  { endpoint: 'video', rule: 'metadata.watermark is a boolean', patch: { metadata: { watermark: 0 } }, param: 'metadata.watermark', expected: BOOLEAN },
  { endpoint: 'video', rule: 'metadata.service_tier is a string', patch: { metadata: { service_tier: 1 } }, param: 'metadata.service_tier', expected: STRING },

  // 2.10 SpeechRequest + 8
  { endpoint: 'speech', rule: 'model required', patch: { model: DROP }, param: 'model', missing: true },
  { endpoint: 'speech', rule: 'input required', patch: { input: DROP }, param: 'input', missing: true },
  { endpoint: 'speech', rule: 'input not empty', patch: { input: '' }, param: 'input', expected: /expected a non-empty string/ },
  { endpoint: 'speech', rule: 'input is a string', patch: { input: 5 }, param: 'input', expected: /expected a non-empty string/ },
  { endpoint: 'speech', rule: 'voice required', patch: { voice: DROP }, param: 'voice', missing: true },
  { endpoint: 'speech', rule: 'voice form (alloy)', patch: { voice: 'alloy' }, param: 'voice', expected: VOICE },
  { endpoint: 'speech', rule: 'voice form (3 segments)', patch: { voice: 'en_female_anna' }, param: 'voice', expected: VOICE },
  { endpoint: 'speech', rule: 'voice form (empty segment)', patch: { voice: 'en__anna_v1' }, param: 'voice', expected: VOICE },
  { endpoint: 'speech', rule: 'voice is a string', patch: { voice: 5 }, param: 'voice', expected: VOICE },
  {
    endpoint: 'speech',
    rule: 'response_format mp3|wav|opus',
    patch: { response_format: 'aac' },
    param: 'response_format',
    expected: /expected one of 'mp3', 'wav', 'opus'/,
  },
  { endpoint: 'speech', rule: 'speed min 0.5', patch: { speed: 0.49 }, param: 'speed', expected: SPEED },
  { endpoint: 'speech', rule: 'speed max 2.0', patch: { speed: 2.01 }, param: 'speed', expected: SPEED },
  { endpoint: 'speech', rule: 'speed is a number', patch: { speed: '1' }, param: 'speed', expected: SPEED },
  { endpoint: 'speech', rule: 'instructions is a string', patch: { instructions: 1 }, param: 'instructions', expected: STRING },
  { endpoint: 'speech', rule: 'stream_format is a string', patch: { stream_format: 1 }, param: 'stream_format', expected: STRING },
  { endpoint: 'speech', rule: 'metadata is an object', patch: { metadata: [] }, param: 'metadata', expected: OBJECT },
];

interface Accepted {
  endpoint: Endpoint;
  rule: string;
  patch: Record<string, unknown>;
  /** Fields the parsed output must hold (unknown fields kept, conversions done). */
  output?: Record<string, unknown>;
}

const CUSTOM = { x_custom: { nested: [1, 'two'] } };

const accepted: Accepted[] = [
  // Unknown fields are accepted and kept, at the top level and inside known objects.
  ...(Object.keys(endpoints) as Endpoint[]).map((endpoint) => ({
    endpoint,
    rule: 'unknown fields are kept',
    patch: CUSTOM,
    output: CUSTOM,
  })),
  {
    endpoint: 'chat',
    rule: 'unknown message fields are kept',
    patch: { messages: [{ role: 'user', content: 'hi', name: 'ann', x_extra: 1 }] },
    output: { messages: [{ role: 'user', content: 'hi', name: 'ann', x_extra: 1 }] },
  },
  {
    endpoint: 'video',
    rule: 'unknown metadata keys are kept',
    patch: { metadata: { resolution: '720p', camera_fixed: true } },
    output: { metadata: { resolution: '720p', camera_fixed: true } },
  },
  // Bounds, accepted side.
  { endpoint: 'responses', rule: 'max_output_tokens 1', patch: { max_output_tokens: 1 } },
  { endpoint: 'responses', rule: 'truncation auto', patch: { truncation: 'auto' } },
  { endpoint: 'responses', rule: 'truncation disabled', patch: { truncation: 'disabled' } },
  { endpoint: 'responses', rule: 'input as items', patch: { input: [{ role: 'user', content: 'hi' }] } },
  // What Codex 0.169 sends on every turn, tool kinds and history items included.
  {
    endpoint: 'responses',
    rule: 'Codex request fields',
    patch: {
      input: [
        { type: 'message', id: 'msg_1', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: null },
        { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' },
        { type: 'custom_tool_call_output', call_id: 'call_1', output: 'ok' },
      ],
      tools: [
        {
          type: 'namespace',
          name: 'multi_agent_v1',
          description: 'Sub-agents',
          tools: [{ type: 'function', name: 'spawn_agent', strict: false, parameters: { type: 'object' } }],
        },
        { type: 'custom', name: 'apply_patch', format: { type: 'grammar', syntax: 'lark', definition: 'start: "x"' } },
        { type: 'tool_search', execution: 'client', parameters: { type: 'object' } },
        { type: 'web_search', external_web_access: false, search_content_types: ['text', 'image'] },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: '01a207db-c1d2-7801-a7da-acb8493940fc',
      text: { verbosity: 'low' },
      client_metadata: { session_id: 's', 'x-codex-turn-metadata': '{"turn_id":"t"}' },
    },
  },
  { endpoint: 'chat', rule: 'max_tokens 1', patch: { max_tokens: 1, max_completion_tokens: 1 } },
  {
    endpoint: 'chat',
    rule: 'content null is present',
    patch: {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null },
        { role: 'user', content: 'and?' },
      ],
    },
  },
  {
    endpoint: 'chat',
    rule: 'assistant with tool_calls may omit content',
    patch: {
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    },
  },
  { endpoint: 'messages', rule: 'max_tokens 1', patch: { max_tokens: 1 } },
  // What Claude Code sends: a system message in the conversation, adaptive thinking with its
  // display, effort, context management, a JSON user id and a deferred tool.
  {
    endpoint: 'messages',
    rule: 'system role in messages',
    patch: {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: [{ type: 'text', text: '# Environment', cache_control: { type: 'ephemeral' } }] },
      ],
    },
  },
  {
    endpoint: 'messages',
    rule: 'system message with only output_config',
    patch: {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', output_config: { effort: 'low' } },
      ],
    },
  },
  {
    endpoint: 'messages',
    rule: 'Claude Code request fields',
    patch: {
      thinking: { type: 'adaptive', display: 'omitted' },
      output_config: { effort: 'high' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      metadata: { user_id: JSON.stringify({ device_id: 'd'.repeat(64), account_uuid: '', session_id: 's' }) },
      tools: [{ name: 'DeferredToolPlaceholder', input_schema: { type: 'object', properties: {} }, defer_loading: true }],
    },
  },
  { endpoint: 'messages', rule: 'system at top level', patch: { system: [{ type: 'text', text: 'be brief', cache_control: { type: 'ephemeral' } }] } },
  {
    endpoint: 'messages',
    rule: 'server tool without input_schema, custom tool with one',
    patch: {
      tools: [
        { type: 'web_search_20250305', name: 'web_search' },
        { name: 'get_weather', description: 'w', input_schema: { type: 'object', properties: {} } },
      ],
    },
  },
  { endpoint: 'images', rule: 'n 1', patch: { n: 1 } },
  { endpoint: 'images', rule: 'n 128', patch: { n: 128, size: '256x256' } },
  { endpoint: 'images', rule: 'image one string', patch: { image: 'https://example.com/a.png' } },
  { endpoint: 'images', rule: 'image 1 string in an array', patch: { image: ['https://example.com/a.png'] } },
  { endpoint: 'images', rule: 'image 10 strings', patch: { image: tooManyImages.slice(0, 10) } },
  { endpoint: 'edits', rule: 'n "1" becomes 1', patch: { n: '1' }, output: { n: 1 } },
  { endpoint: 'edits', rule: 'n "128" becomes 128', patch: { n: '128' }, output: { n: 128 } },
  { endpoint: 'edits', rule: 'stream "true" becomes true', patch: { stream: 'true', partial_images: '2' }, output: { stream: true, partial_images: 2 } },
  { endpoint: 'video', rule: 'duration 1', patch: { duration: 1 } },
  { endpoint: 'video', rule: 'duration 3600', patch: { duration: 3600 } },
  { endpoint: 'video', rule: 'seconds 1', patch: { seconds: 1 } },
  { endpoint: 'video', rule: 'seconds 3600', patch: { seconds: 3600 } },
  { endpoint: 'video', rule: 'seconds "8" (string)', patch: { seconds: '8' }, output: { seconds: '8' } },
  { endpoint: 'video', rule: 'seconds non-numeric string', patch: { seconds: '8s' } },
  { endpoint: 'speech', rule: 'speed 0.5', patch: { speed: 0.5 } },
  { endpoint: 'speech', rule: 'speed 2.0', patch: { speed: 2 } },
  { endpoint: 'speech', rule: 'response_format wav', patch: { response_format: 'wav' } },
  { endpoint: 'speech', rule: 'response_format opus', patch: { response_format: 'opus' } },
  { endpoint: 'speech', rule: 'voice with a numeric variant', patch: { voice: 'zh_male_yunxi_2' } },
  { endpoint: 'speech', rule: 'voice with a multi-part variant', patch: { voice: 'zh_female_cancan_mars_bigtts' } },
];

function expectedMessage(row: Rejected): RegExp {
  return row.missing
    ? new RegExp(`^Missing required parameter: '${escapeRegExp(row.param)}'\\.`)
    : new RegExp(`^Invalid value for '${escapeRegExp(row.param)}': expected .+, received .+\\.$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function validationError(endpoint: Endpoint, input: unknown): GatewayError {
  try {
    validateBody(endpoints[endpoint].schema, input);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a validation error');
}

const label = (row: { endpoint: Endpoint; rule: string }) => `${endpoints[row.endpoint].path}: ${row.rule}`;

describe('validateBody: rejected', () => {
  it.each(rejected.map((row) => [label(row), row] as const))('%s', (_, row) => {
    const error = validationError(row.endpoint, body(row.endpoint, row.patch));
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(row.param);
    expect(error.code).toBe(row.missing ? 'missing_required_parameter' : 'invalid_value');
    expect(error.message).toMatch(expectedMessage(row));
    if (row.expected) expect(error.message).toMatch(row.expected);
  });
});

describe('validateBody: accepted', () => {
  it.each(accepted.map((row) => [label(row), row] as const))('%s', (_, row) => {
    const input = body(row.endpoint, row.patch);
    const output = validateBody(endpoints[row.endpoint].schema, input) as Record<string, unknown>;
    expect(output).toMatchObject(row.output ?? input);
  });
});

describe('validateBody: messages and paths', () => {
  it('writes the expected and the received value', () => {
    const error = validationError('speech', body('speech', { speed: 3 }));
    expect(error.message).toBe("Invalid value for 'speed': expected a number from 0.5 to 2.0, received 3.");
    expect(validationError('responses', { input: 'hi' }).message).toBe("Missing required parameter: 'model'.");
  });

  it('truncates a huge received string', () => {
    const error = validationError('responses', body('responses', { truncation: 'y'.repeat(100_000) }));
    expect(error.param).toBe('truncation');
    expect(error.message.length).toBeLessThan(300);
    expect(error.message).toContain(`received "${'y'.repeat(100)}…" (100000 characters).`);
  });

  it('summarizes containers instead of printing them', () => {
    expect(validationError('responses', body('responses', { instructions: { a: 1 } })).message).toMatch(/received an object\.$/);
    expect(validationError('responses', body('responses', { instructions: [1, 2] })).message).toMatch(/received an array of 2 items\.$/);
    expect(validationError('responses', body('responses', { instructions: null })).message).toMatch(/received null\.$/);
  });

  it('reports the first issue in the spec order, whatever the body order', () => {
    const error = validationError('images', { n: 0, prompt: 5, model: 'm-image' });
    expect(error.param).toBe('prompt');
  });

  it('names nested paths the way OpenAI does', () => {
    const error = validationError('chat', body('chat', { messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }, { content: 'c' }] }));
    expect(error.param).toBe('messages[2].role');
  });

  it('rejects a body that is not an object with param null', () => {
    for (const input of [[], 'text', null, 42]) {
      const error = validationError('responses', input);
      expect(error.param).toBeNull();
      expect(error.message).toMatch(/^Invalid request body: expected a JSON object/);
    }
  });

  it('numbers must be finite', () => {
    expect(validationError('chat', body('chat', { temperature: Number.POSITIVE_INFINITY })).param).toBe('temperature');
    expect(validationError('chat', body('chat', { top_p: Number.NaN })).param).toBe('top_p');
  });

  it('the voice pattern needs four non-empty segments with a language code first', () => {
    for (const ok of ['en_female_anna_v1', 'zh_male_yunxi_2', 'en-GB_male_george_1', 'multi_female_vv_uranus_bigtts']) {
      expect(VOICE_PATTERN.test(ok), ok).toBe(true);
    }
    for (const bad of ['alloy', 'en_female_anna', '_female_anna_v1', 'en_female_anna_', 'EN_female_anna_v1', 'en female anna v1', 'en_female_anna__v1']) {
      expect(VOICE_PATTERN.test(bad), bad).toBe(false);
    }
  });
});

describe('checkEditFiles', () => {
  const file = (field: string, size = 10): EditFile => ({ field, filename: `${field}.png`, size });

  it('accepts image, image[] and image[0] fields and one mask', () => {
    const files = [file('image'), file('image[]'), file('image[0]'), file('mask'), file('other')];
    const { images, mask } = checkEditFiles(files);
    expect(images.map((f) => f.field)).toEqual(['image', 'image[]', 'image[0]']);
    expect(mask?.field).toBe('mask');
  });

  it('requires at least one image', () => {
    for (const files of [[], [file('mask')], [file('picture')]]) {
      const error = catchError(() => checkEditFiles(files));
      expect(error).toMatchObject({ status: 400, param: 'image', code: 'missing_required_parameter' });
      expect(error.message).toMatch(/^Missing required parameter: 'image'\./);
    }
  });

  it('allows at most one mask', () => {
    const error = catchError(() => checkEditFiles([file('image'), file('mask'), file('mask')]));
    expect(error).toMatchObject({ status: 400, param: 'mask', code: 'invalid_value' });
    expect(error.message).toMatch(/expected at most one mask file, received 2/);
  });

  it('rejects empty files', () => {
    expect(catchError(() => checkEditFiles([file('image', 0)]))).toMatchObject({ status: 400, param: 'image' });
    expect(catchError(() => checkEditFiles([file('image[]'), file('image[]', 0)]))).toMatchObject({ param: 'image[1]' });
    expect(catchError(() => checkEditFiles([file('image'), file('mask', 0)]))).toMatchObject({ param: 'mask' });
  });
});

function catchError(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

// ---------------------------------------------------------------------------------------------
// The same rows through the HTTP handler.

const KEY = 'sk-test';
let gateway: Gateway;

async function post(endpoint: Endpoint, payload: Record<string, unknown>): Promise<Response> {
  const url = `http://localhost${endpoints[endpoint].path}`;
  if (endpoint === 'edits') {
    const form = new FormData();
    for (const [key, value] of Object.entries(payload)) form.append(key, String(value));
    form.append('image', new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'in.png');
    return gateway.fetch(url, { method: 'POST', headers: { authorization: `Bearer ${KEY}` }, body: form });
  }
  const headers: Record<string, string> =
    endpoint === 'messages'
      ? { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }
      : { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
  return gateway.fetch(url, { method: 'POST', headers, body: JSON.stringify(payload) });
}

const jsonRejected = rejected.filter((row) => row.endpoint !== 'edits' && row.endpoint !== 'messages');
const messagesRejected = rejected.filter((row) => row.endpoint === 'messages');
const editsRejected = rejected.filter((row) => row.endpoint === 'edits');

/** A 400 produced by `validateBody` (OpenAI shape: by code; Anthropic shape: by message). */
function isValidationRejection(status: number, text: string): boolean {
  if (status !== 400) return false;
  const error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error ?? {};
  if (error.code === 'invalid_value' || error.code === 'missing_required_parameter') return true;
  return typeof error.message === 'string' && /^(Invalid value for|Missing required parameter|Invalid request body)/.test(error.message);
}

function isText(endpoint: Endpoint): boolean {
  return endpoint === 'responses' || endpoint === 'chat' || endpoint === 'messages';
}

describe('HTTP (gateway.fetch)', () => {
  beforeAll(async () => {
    // Imported here so that the direct rows above run even while the gateway's modules are in
    // progress; a failure to load shows up on every HTTP test below.
    const [{ createGateway }, { createLocalProvider }] = await Promise.all([
      import('../../src/gateway.js'),
      import('../../src/providers/local/local-provider.js'),
    ]);
    gateway = createGateway({
      keys: [{ key: KEY }],
      models: [
        { id: 'm-text', provider: 'local', kind: 'text' },
        { id: 'm-image', provider: 'local', kind: 'image' },
        { id: 'm-video', provider: 'local', kind: 'video' },
        { id: 'm-speech', provider: 'local', kind: 'speech' },
      ],
      providers: { local: createLocalProvider({ chunkDelayMs: 0 }) },
      logger: false,
    });
  });

  describe('HTTP: rejected rows answer 400 in the OpenAI shape', () => {
    it.each(jsonRejected.map((row) => [label(row), row] as const))('%s', async (_, row) => {
      const response = await post(row.endpoint, body(row.endpoint, row.patch));
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: Record<string, unknown> };
      expect(json).toEqual({
        error: {
          message: expect.stringMatching(expectedMessage(row)),
          type: 'invalid_request_error',
          param: row.param,
          code: row.missing ? 'missing_required_parameter' : 'invalid_value',
        },
      });
      if (row.expected) expect(json.error.message).toMatch(row.expected);
    });
  });

  describe('HTTP: /v1/messages rows answer 400 in the Anthropic shape', () => {
    it.each(messagesRejected.map((row) => [label(row), row] as const))('%s', async (_, row) => {
      const response = await post('messages', body('messages', row.patch));
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: { message: string } };
      // Anthropic's error has no `param`: the message names the field.
      expect(json).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.any(String) },
        request_id: response.headers.get('request-id'),
      });
      expect(json.error.message).toContain(`'${row.param}'`);
      expect(json.error.message).toMatch(expectedMessage(row));
      if (row.expected) expect(json.error.message).toMatch(row.expected);
    });
  });

  describe('HTTP: accepted rows pass validation', () => {
    it.each(accepted.filter((row) => row.endpoint !== 'edits').map((row) => [label(row), row] as const))('%s', async (_, row) => {
      const response = await post(row.endpoint, body(row.endpoint, row.patch));
      const text = await response.text();
      // Only validation is under test: a later stage may still refuse the request for its own
      // reasons (the local provider's translation path refuses fields it cannot carry, media
      // calls may be 501), but never with a validation error, and never with a 500.
      expect(isValidationRejection(response.status, text), text).toBe(false);
      expect(response.status === 501 || response.status < 500, text).toBe(true);
      if (isText(row.endpoint) && response.status !== 200) {
        expect(response.status, text).toBe(400);
      }
    });
  });

  describe('HTTP: /v1/images/edits multipart fields', () => {
    it.each(editsRejected.map((row) => [label(row), row] as const))('%s', async (_, row) => {
      const response = await post('edits', body('edits', row.patch));
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: Record<string, unknown> };
      expect(json.error).toMatchObject({ type: 'invalid_request_error', param: row.param });
      expect(json.error.message).toMatch(expectedMessage(row));
    });

    it('no image file → 400 on image', async () => {
      const form = new FormData();
      form.append('model', 'm-image');
      form.append('prompt', 'add a hat');
      const response = await gateway.fetch('http://localhost/v1/images/edits', {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
        body: form,
      });
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: Record<string, unknown> };
      expect(json.error).toMatchObject({ param: 'image', code: 'missing_required_parameter' });
    });
  });

  describe('HTTP: bodies that are not valid JSON objects answer 400, never 500', () => {
    const cases: [string, RequestInit, string][] = [
      ['malformed JSON', { body: '{"model": "m-text",', headers: { 'content-type': 'application/json' } }, 'invalid_json'],
      ['no body', { headers: { 'content-type': 'application/json' } }, 'missing_body'],
      ['wrong content type', { body: '{"model":"m-text","input":"hi"}', headers: { 'content-type': 'text/plain' } }, 'invalid_content_type'],
      ['array body', { body: '[]', headers: { 'content-type': 'application/json' } }, 'invalid_body'],
    ];
    it.each(cases)('%s', async (_, init, code) => {
      const response = await gateway.fetch('http://localhost/v1/responses', {
        method: 'POST',
        ...init,
        headers: { authorization: `Bearer ${KEY}`, ...(init.headers as Record<string, string>) },
      });
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: Record<string, unknown> };
      expect(json.error).toMatchObject({ type: 'invalid_request_error', code });
    });
  });
});
