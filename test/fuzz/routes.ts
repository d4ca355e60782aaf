import type { MultipartPart, RouteName } from './cases.js';
import { SLOW_VIDEO_MODEL, STATEFUL_MODEL } from './settings.js';

/** A route as the fuzzer sees it: where it is, how its body is sent, and which error shape it answers. */
export interface FuzzRoute {
  name: RouteName;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /**
   * `/v1/messages` and its `count_tokens` answer Anthropic's error body, the `/v1beta` routes
   * Google's; everything else OpenAI's (the model routes answer Anthropic's or Google's to a
   * client that sends their headers: `oracle.ts`); `/mcp` a JSON-RPC error.
   */
  style: 'openai' | 'anthropic' | 'gemini' | 'mcp';
  body: 'json' | 'multipart' | 'none';
}

export const fuzzRoutes: readonly FuzzRoute[] = [
  { name: 'models', method: 'GET', path: '/v1/models', style: 'openai', body: 'none' },
  { name: 'model-get', method: 'GET', path: '/v1/models/local-chat', style: 'openai', body: 'none' },
  { name: 'responses', method: 'POST', path: '/v1/responses', style: 'openai', body: 'json' },
  { name: 'responses-alias', method: 'POST', path: '/responses', style: 'openai', body: 'json' },
  { name: 'chat', method: 'POST', path: '/v1/chat/completions', style: 'openai', body: 'json' },
  { name: 'messages', method: 'POST', path: '/v1/messages', style: 'anthropic', body: 'json' },
  { name: 'count-tokens', method: 'POST', path: '/v1/messages/count_tokens', style: 'anthropic', body: 'json' },
  { name: 'input-tokens', method: 'POST', path: '/v1/responses/input_tokens', style: 'openai', body: 'json' },
  { name: 'compact', method: 'POST', path: '/v1/responses/compact', style: 'openai', body: 'json' },
  { name: 'response-get', method: 'GET', path: '/v1/responses/{response}', style: 'openai', body: 'none' },
  { name: 'response-items', method: 'GET', path: '/v1/responses/{response}/input_items', style: 'openai', body: 'none' },
  { name: 'response-delete', method: 'DELETE', path: '/v1/responses/{response}', style: 'openai', body: 'none' },
  { name: 'images', method: 'POST', path: '/v1/images/generations', style: 'openai', body: 'json' },
  { name: 'edits', method: 'POST', path: '/v1/images/edits', style: 'openai', body: 'multipart' },
  { name: 'video-create', method: 'POST', path: '/v1/video/generations', style: 'openai', body: 'json' },
  { name: 'video-status', method: 'GET', path: '/v1/video/generations/{completed}', style: 'openai', body: 'none' },
  { name: 'video-content', method: 'GET', path: '/v1/videos/{completed}/content', style: 'openai', body: 'none' },
  { name: 'speech', method: 'POST', path: '/v1/audio/speech', style: 'openai', body: 'json' },
  { name: 'embeddings', method: 'POST', path: '/v1/embeddings', style: 'openai', body: 'json' },
  { name: 'transcriptions', method: 'POST', path: '/v1/audio/transcriptions', style: 'openai', body: 'multipart' },
  { name: 'gemini', method: 'POST', path: '/v1beta/models/local-chat:generateContent', style: 'gemini', body: 'json' },
  { name: 'gemini-stream', method: 'POST', path: '/v1beta/models/local-chat:streamGenerateContent?alt=sse', style: 'gemini', body: 'json' },
  { name: 'gemini-embed', method: 'POST', path: '/v1beta/models/local-embedding:batchEmbedContents', style: 'gemini', body: 'json' },
  { name: 'gemini-count', method: 'POST', path: '/v1beta/models/local-chat:countTokens', style: 'gemini', body: 'json' },
  { name: 'gemini-models', method: 'GET', path: '/v1beta/models', style: 'gemini', body: 'none' },
  { name: 'gemini-model-get', method: 'GET', path: '/v1beta/models/local-chat', style: 'gemini', body: 'none' },
  { name: 'usage', method: 'GET', path: '/v1/usage', style: 'openai', body: 'none' },
  // In the caller's session (`Mcp-Session-Id: {mcpSession}`), and `initialize`, which makes one.
  { name: 'mcp', method: 'POST', path: '/mcp', style: 'mcp', body: 'json' },
  { name: 'mcp-initialize', method: 'POST', path: '/mcp', style: 'mcp', body: 'json' },
  { name: 'unrouted', method: 'GET', path: '/v1/nothing-here', style: 'openai', body: 'none' },
];

export function routeOf(name: RouteName): FuzzRoute {
  const route = fuzzRoutes.find((candidate) => candidate.name === name);
  if (!route) throw new Error(`unknown fuzz route ${name}`);
  return route;
}

const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
/** A tiny PNG as a data URL (its bytes are not decoded by the text routes). */
const dataUrl = 'data:image/png;base64,iVBORw0KGgo=';

/**
 * Valid bodies that the mutations start from: each route's fields, nested ones included (messages,
 * content parts, tools, tool calls, metadata), so that every field path gets corrupted. Values are
 * the cheap ones (a 16×16 image, one-second video, two words of speech), so a mutation that stays
 * valid still answers in milliseconds.
 */
export const validBodies: Partial<Record<RouteName, readonly Record<string, unknown>[]>> = {
  responses: [
    {
      model: 'local-chat',
      instructions: 'Be brief.',
      input: [
        { role: 'system', content: 'You are terse.' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is the weather in Paris? Use the get_weather tool.' },
            { type: 'input_image', image_url: dataUrl, detail: 'low' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
          ],
        },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temperature":21}' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'It is 21.' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather by city', parameters: weatherSchema, strict: true }],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      reasoning: { effort: 'low', summary: 'auto' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true } },
      max_output_tokens: 64,
      temperature: 0.5,
      top_p: 1,
      stream: false,
      store: false,
      metadata: { purpose: 'fuzz' },
      truncation: 'disabled',
      prompt_cache_key: 'fuzz',
      include: ['reasoning.encrypted_content'],
      user: 'fuzzer',
    },
    { model: 'local-reasoner', input: 'Hello there', stream: true },
  ],
  chat: [
    {
      model: 'local-chat',
      messages: [
        { role: 'system', content: 'You are terse.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Paris? Use a tool.' },
            { type: 'image_url', image_url: { url: dataUrl, detail: 'low' } },
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'thinking',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '{"temperature":21}' }] },
        { role: 'user', content: 'Thanks' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: weatherSchema, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: false,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } } }, strict: true },
      },
      max_tokens: 64,
      max_completion_tokens: 64,
      temperature: 0.5,
      top_p: 1,
      n: 1,
      stop: ['\n\n'],
      seed: 7,
      stream: false,
      stream_options: { include_usage: true },
      reasoning_effort: 'low',
      metadata: { purpose: 'fuzz' },
      user: 'fuzzer',
    },
    { model: 'local-reasoner', messages: [{ role: 'user', content: 'Hello there' }], stream: true },
  ],
  messages: [
    {
      model: 'local-reasoner',
      max_tokens: 64,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Paris? Use the get_weather tool.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'A document.' }, title: 'doc' },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21' }], is_error: false }] },
      ],
      tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: weatherSchema, cache_control: { type: 'ephemeral' } }],
      tool_choice: { type: 'auto', disable_parallel_tool_use: false },
      thinking: { type: 'enabled', budget_tokens: 32 },
      temperature: 1,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ['END'],
      stream: false,
      metadata: { user_id: 'fuzzer' },
    },
    { model: 'local-chat', max_tokens: 32, messages: [{ role: 'user', content: 'Hello there' }], stream: true },
  ],
  'count-tokens': [
    {
      model: 'local-reasoner',
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Paris? Use the get_weather tool.' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        // Claude Code sends system turns inside `messages`.
        { role: 'system', content: 'Reminder: be brief.' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'I should call the tool.', signature: 'sig' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21' }], is_error: false }] },
      ],
      tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: weatherSchema, cache_control: { type: 'ephemeral' } }],
      tool_choice: { type: 'auto' },
      thinking: { type: 'adaptive', display: 'omitted' },
    },
    { model: 'local-chat', messages: [{ role: 'user', content: 'Hello there' }] },
  ],
  'input-tokens': [
    {
      model: 'local-chat',
      instructions: 'Be brief.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Weather in Paris?' },
            { type: 'input_image', image_url: dataUrl, detail: 'low' },
          ],
        },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temperature":21}' },
      ],
      tools: [{ type: 'function', name: 'get_weather', description: 'Weather by city', parameters: weatherSchema, strict: true }],
      tool_choice: 'auto',
      reasoning: { effort: 'low' },
      text: { format: { type: 'text' } },
      parallel_tool_calls: true,
      truncation: 'disabled',
      max_output_tokens: 64,
      temperature: 0.5,
      top_p: 1,
      store: false,
      include: ['reasoning.encrypted_content'],
      metadata: { purpose: 'fuzz' },
      prompt_cache_key: 'fuzz',
    },
    // The SDK sends the fields it was not given as null.
    { model: STATEFUL_MODEL, input: 'Hello there', instructions: null, tools: null, previous_response_id: null, conversation: null },
  ],
  compact: [
    {
      model: 'local-chat',
      instructions: 'You are a coding agent.',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the failing test.' }] },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Look at the test first.' }], encrypted_content: null },
        { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"npm test"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '1 failing' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'One test fails.' }] },
      ],
      tools: [
        {
          type: 'function',
          name: 'exec_command',
          description: 'Runs a command',
          parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
          strict: false,
        },
      ],
      parallel_tool_calls: false,
      reasoning: { effort: 'low', summary: 'auto' },
      text: { verbosity: 'low' },
      service_tier: 'auto',
      prompt_cache_key: 'fuzz',
      // Not among Codex's fields, but Responses fields a client may add; the summary is generated with them.
      max_output_tokens: 256,
      temperature: 0.5,
      top_p: 1,
      tool_choice: 'auto',
      store: false,
      include: ['reasoning.encrypted_content'],
      metadata: { purpose: 'fuzz' },
    },
    { model: 'local-reasoner', input: 'Summarize: we fixed the bug.' },
  ],
  images: [
    {
      model: 'local-image',
      prompt: 'a cat',
      n: 1,
      size: '16x16',
      quality: 'low',
      response_format: 'b64_json',
      output_format: 'png',
      output_compression: 50,
      stream: false,
      partial_images: 1,
      background: 'opaque',
      moderation: 'auto',
      watermark: false,
    },
    { model: 'local-image', prompt: 'a dog', size: '16x16', stream: true, partial_images: 2 },
  ],
  'video-create': [
    {
      model: 'local-video',
      prompt: 'a cat',
      seconds: 1,
      duration: 1,
      size: '32x32',
      metadata: {
        resolution: '480p',
        ratio: '1:1',
        content: [{ type: 'text', text: 'x' }],
        generate_audio: false,
        watermark: false,
        service_tier: 'default',
        extra: 1,
      },
    },
    { model: SLOW_VIDEO_MODEL, prompt: 'a dog', seconds: '2' },
  ],
  // The model is in the path; every part kind, a function call answered by id and one by name.
  gemini: [
    {
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'What is the weather in Paris? Use the get_weather tool.' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'thinking', thought: true },
            { functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
            { functionCall: { name: 'get_weather', args: { city: 'Lyon' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_1', name: 'get_weather', response: { output: '21' } } },
            { functionResponse: { name: 'get_weather', response: { temperature: 19 } } },
          ],
        },
        { role: 'model', parts: [{ text: 'It is 21 and 19.' }] },
        { role: 'user', parts: [{ text: 'Thanks' }] },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather by city',
              parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      generationConfig: {
        temperature: 0.5,
        topP: 0.9,
        topK: 20,
        maxOutputTokens: 64,
        stopSequences: ['END'],
        seed: 1,
        responseMimeType: 'application/json',
        responseSchema: { type: 'OBJECT', properties: { answer: { type: 'STRING', nullable: true } } },
        thinkingConfig: { includeThoughts: true, thinkingBudget: 128 },
      },
    },
    { contents: [{ parts: [{ text: 'Hello there' }] }] },
  ],
  'gemini-stream': [
    {
      contents: [{ role: 'user', parts: [{ text: 'Use the get_weather tool for Paris' }] }],
      tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: weatherSchema }] }],
      generationConfig: { maxOutputTokens: 64, thinkingConfig: { thinkingLevel: 'LOW' } },
    },
    { contents: [{ parts: [{ text: 'Hello there' }] }] },
  ],
  'gemini-embed': [
    {
      requests: [
        {
          model: 'models/local-embedding',
          content: { role: 'user', parts: [{ text: 'a cat' }, { text: 'on a mat' }] },
          taskType: 'RETRIEVAL_DOCUMENT',
          title: 'Cats',
          outputDimensionality: 8,
        },
        { content: { parts: [{ text: 'a dog' }] }, outputDimensionality: 8 },
      ],
    },
    { requests: [{ content: { parts: [{ text: 'one text' }] } }] },
  ],
  'gemini-count': [
    { contents: [{ role: 'user', parts: [{ text: 'How long is this?' }] }] },
    {
      generateContentRequest: {
        model: 'models/local-chat',
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [{ role: 'user', parts: [{ text: 'Use the get_weather tool for Paris' }] }],
        tools: [{ functionDeclarations: [{ name: 'get_weather', parametersJsonSchema: weatherSchema }] }],
      },
    },
  ],
  embeddings: [
    { model: 'local-embedding', input: ['a cat', 'a dog'], encoding_format: 'float', dimensions: 8, user: 'fuzzer' },
    { model: 'local-embedding', input: [[1, 2, 3], [4]], encoding_format: 'base64' },
    { model: 'local-embedding', input: 'one text' },
  ],
  // JSON-RPC in a session: each method the gateway serves, params of every kind (`_meta`, a
  // progress token, a cursor, nested tool arguments), a notification, a response, a batch.
  mcp: [
    {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'vault__echo',
        arguments: { text: 'hello', times: 2, tags: ['a', 'b'], options: { loud: false, note: null } },
        _meta: { progressToken: 'p1', 'x-codex-turn-metadata': { turn_id: 't1' } },
      },
    },
    { jsonrpc: '2.0', id: 'list-1', method: 'tools/list', params: { cursor: 'c', _meta: {} } },
    { jsonrpc: '2.0', id: 'read-1', method: 'resources/read', params: { uri: 'file:///etc/hosts', _meta: {} } },
    { jsonrpc: '2.0', id: 'templates-1', method: 'resources/templates/list', params: {} },
    { jsonrpc: '2.0', id: 3, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'user' } },
    { jsonrpc: '2.0', id: 5, result: { content: [{ type: 'text', text: 'a sampling answer' }] } },
    { jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: {} },
  ],
  'mcp-initialize': [
    {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: { roots: { listChanged: true }, elicitation: { form: {}, url: {} }, sampling: {} },
        clientInfo: { name: 'claude-code', version: '2.1.332', title: 'Claude Code' },
        _meta: { trace: 'x' },
      },
    },
    {
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gemini-cli-mcp-client', version: '0.61.0' } },
    },
  ],
  speech: [
    {
      model: 'local-speech',
      input: 'Hi there.',
      voice: 'en_female_anna_v1',
      instructions: 'Calmly.',
      response_format: 'wav',
      speed: 1.5,
      stream_format: 'audio',
      metadata: { purpose: 'fuzz' },
    },
    { model: 'local-speech', input: 'Hello', voice: 'zh_male_yunxi_mars_bigtts', response_format: 'opus', speed: 2 },
    { model: 'local-speech', input: 'Hello', voice: 'en_male_bob_v2' },
  ],
};

/**
 * Fields never dropped by the mutations, because the request stays valid and only gets slow:
 * without `size` the local image model draws 1024×1024 (~0.7 s a case, a third of the budget).
 */
export const keptFields: Partial<Record<RouteName, readonly string[]>> = {
  images: ['size'],
};

/** The valid edit form: text fields first, then the image and its mask, as SDKs send them. */
export const validEditForm: readonly MultipartPart[] = [
  { name: 'model', value: 'local-image' },
  { name: 'prompt', value: 'add a hat' },
  { name: 'n', value: '1' },
  { name: 'size', value: '16x16' },
  { name: 'quality', value: 'low' },
  { name: 'output_format', value: 'png' },
  { name: 'input_fidelity', value: 'low' },
  { name: 'response_format', value: 'b64_json' },
  { name: 'stream', value: 'false' },
  { name: 'partial_images', value: '1' },
  { name: 'image', filename: 'cat.png', contentType: 'image/png', value: { fixture: 'png16' } },
  { name: 'mask', filename: 'mask.png', contentType: 'image/png', value: { fixture: 'mask16' } },
];

/** The valid transcription form the multipart mutations start from (every field, timestamps asked). */
export const validTranscriptionForm: readonly MultipartPart[] = [
  { name: 'model', value: 'local-transcription' },
  { name: 'language', value: 'en' },
  { name: 'prompt', value: 'Two words.' },
  { name: 'response_format', value: 'verbose_json' },
  { name: 'temperature', value: '0.2' },
  { name: 'timestamp_granularities[]', value: 'word' },
  { name: 'timestamp_granularities[]', value: 'segment' },
  { name: 'chunking_strategy[type]', value: 'server_vad' },
  { name: 'chunking_strategy[silence_duration_ms]', value: '500' },
  { name: 'stream', value: 'false' },
  { name: 'file', filename: 'hum.wav', contentType: 'audio/wav', value: { fixture: 'wav' } },
];
