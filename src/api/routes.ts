import type { Route } from '../http/route.js';
import { chatClient } from '../protocols/chat/index.js';
import { geminiClient, geminiStreamClient, geminiStyle } from '../protocols/gemini/index.js';
import { anthropicStyle, messagesClient } from '../protocols/messages/index.js';
import { openaiStyle } from '../protocols/openai/style.js';
import { responsesClient } from '../protocols/responses/index.js';
import { compactResponse } from './compact.js';
import { countMessageTokens } from './count-tokens.js';
import { createEmbeddings } from './embeddings.js';
import { editImages } from './image-edits.js';
import { countGeminiTokens } from './gemini-count-tokens.js';
import { batchEmbedContents, embedContent } from './gemini-embeddings.js';
import { listGeminiModels, retrieveGeminiModel } from './gemini-models.js';
import { generateImages } from './images.js';
import { countInputTokens } from './input-tokens.js';
import { listModels, modelsStyle, retrieveModel } from './models.js';
import { createSpeech } from './speech.js';
import { deleteResponse, listInputItems, retrieveResponse } from './stored-responses.js';
import { textRoute } from './text/text-route.js';
import { getUsage } from './usage.js';
import { mcpRoute } from './mcp.js';
import { mcpStyle } from '../mcp/mcp-style.js';
import { createTranscription } from './transcriptions.js';
import { createVideo, getVideo, getVideoContent } from './video.js';

const openai = openaiStyle;

/**
 * Every endpoint of the user's specification (models, text in three protocols, images, video,
 * speech) and those agent clients call besides (token counts, stored responses, compaction, one
 * model), and embeddings, paths below the base path. A text protocol is one `textRoute(<its client codec>)`.
 * `admits` is what the key's limits admit before the body is read (`policy/route-admission.ts`).
 */
export const routes: readonly Route[] = [
  { method: 'GET', path: '/v1/models', style: openai, styleFor: modelsStyle, handler: listModels },
  { method: 'GET', path: '/v1/models/:model', style: openai, styleFor: modelsStyle, handler: retrieveModel },
  { method: 'POST', path: '/v1/responses', style: openai, admits: 'text', webSocketFallback: true, handler: textRoute(responsesClient) },
  { method: 'POST', path: '/responses', style: openai, admits: 'text', webSocketFallback: true, handler: textRoute(responsesClient) },
  { method: 'POST', path: '/v1/responses/input_tokens', style: openai, admits: 'requests', handler: countInputTokens },
  { method: 'POST', path: '/v1/responses/compact', style: openai, admits: 'text', handler: compactResponse },
  { method: 'GET', path: '/v1/responses/:id', style: openai, admits: 'requests', handler: retrieveResponse },
  { method: 'DELETE', path: '/v1/responses/:id', style: openai, admits: 'requests', handler: deleteResponse },
  { method: 'GET', path: '/v1/responses/:id/input_items', style: openai, admits: 'requests', handler: listInputItems },
  { method: 'POST', path: '/v1/chat/completions', style: openai, admits: 'text', handler: textRoute(chatClient) },
  { method: 'POST', path: '/v1/messages', style: anthropicStyle, admits: 'text', handler: textRoute(messagesClient) },
  { method: 'POST', path: '/v1/messages/count_tokens', style: anthropicStyle, admits: 'requests', handler: countMessageTokens },
  // Google's paths put the method in the last segment (`models/{model}:generateContent`); `+`
  // lets a model id hold slashes, as the SDK sends `openai/gpt-4o` (http/router.ts).
  { method: 'GET', path: '/v1beta/models', style: geminiStyle, handler: listGeminiModels },
  { method: 'GET', path: '/v1beta/models/:model+', style: geminiStyle, handler: retrieveGeminiModel },
  { method: 'POST', path: '/v1beta/models/:model+:generateContent', style: geminiStyle, admits: 'text', handler: textRoute(geminiClient) },
  { method: 'POST', path: '/v1beta/models/:model+:streamGenerateContent', style: geminiStyle, admits: 'text', handler: textRoute(geminiStreamClient) },
  // `@google/genai` 1.x and later call v1 by default; `GET /v1/models` answers them by their key header.
  { method: 'POST', path: '/v1/models/:model+:generateContent', style: geminiStyle, admits: 'text', handler: textRoute(geminiClient) },
  { method: 'POST', path: '/v1/models/:model+:streamGenerateContent', style: geminiStyle, admits: 'text', handler: textRoute(geminiStreamClient) },
  { method: 'POST', path: '/v1beta/models/:model+:countTokens', style: geminiStyle, admits: 'requests', handler: countGeminiTokens },
  { method: 'POST', path: '/v1/models/:model+:countTokens', style: geminiStyle, admits: 'requests', handler: countGeminiTokens },
  { method: 'POST', path: '/v1beta/models/:model+:batchEmbedContents', style: geminiStyle, admits: 'embedding', handler: batchEmbedContents },
  { method: 'POST', path: '/v1beta/models/:model+:embedContent', style: geminiStyle, admits: 'embedding', handler: embedContent },
  { method: 'POST', path: '/v1/models/:model+:batchEmbedContents', style: geminiStyle, admits: 'embedding', handler: batchEmbedContents },
  { method: 'POST', path: '/v1/models/:model+:embedContent', style: geminiStyle, admits: 'embedding', handler: embedContent },
  { method: 'POST', path: '/v1/images/generations', style: openai, admits: 'image', handler: generateImages },
  { method: 'POST', path: '/v1/images/edits', style: openai, admits: 'image', handler: editImages },
  { method: 'POST', path: '/v1/video/generations', style: openai, admits: 'video', handler: createVideo },
  { method: 'GET', path: '/v1/video/generations/:task_id', style: openai, handler: getVideo },
  { method: 'GET', path: '/v1/videos/:task_id/content', style: openai, admits: 'requests', handler: getVideoContent },
  { method: 'POST', path: '/v1/audio/speech', style: openai, admits: 'speech', handler: createSpeech },
  { method: 'POST', path: '/v1/audio/transcriptions', style: openai, admits: 'transcription', handler: createTranscription },
  { method: 'POST', path: '/v1/embeddings', style: openai, admits: 'embedding', handler: createEmbeddings },
  { method: 'GET', path: '/v1/usage', style: openai, admits: 'requests', handler: getUsage },
  // The MCP gateway: 404 unless `mcp` is configured. No GET: the router's 405 (`Allow: POST, DELETE`)
  // tells clients there is no server-initiated stream, as the Streamable HTTP transport allows.
  { method: 'POST', path: '/mcp', style: mcpStyle, admits: 'requests', handler: mcpRoute },
  { method: 'DELETE', path: '/mcp', style: mcpStyle, handler: mcpRoute },
];
