import type { Route } from '../http/route.js';
import { chatCompletions } from './chat.js';
import { editImages } from './image-edits.js';
import { generateImages } from './images.js';
import { createMessage } from './messages.js';
import { compactResponse } from './compact.js';
import { countMessageTokens } from './count-tokens.js';
import { countInputTokens } from './input-tokens.js';
import { listModels, modelsStyle, retrieveModel } from './models.js';
import { createResponse } from './responses.js';
import { deleteResponse, listInputItems, retrieveResponse } from './stored-responses.js';
import { createSpeech } from './speech.js';
import { createVideo, getVideo, getVideoContent } from './video.js';

/**
 * Every endpoint of the user's specification (models, text in three protocols, images, video,
 * speech) and those agent clients call besides (token counts, stored responses, compaction, one
 * model), paths below the base path.
 */
export const routes: readonly Route[] = [
  { method: 'GET', path: '/v1/models', style: 'openai', styleFor: modelsStyle, handler: listModels },
  { method: 'GET', path: '/v1/models/:model', style: 'openai', styleFor: modelsStyle, handler: retrieveModel },
  { method: 'POST', path: '/v1/responses', style: 'openai', handler: createResponse },
  { method: 'POST', path: '/responses', style: 'openai', handler: createResponse },
  { method: 'POST', path: '/v1/responses/input_tokens', style: 'openai', handler: countInputTokens },
  { method: 'POST', path: '/v1/responses/compact', style: 'openai', handler: compactResponse },
  { method: 'GET', path: '/v1/responses/:id', style: 'openai', handler: retrieveResponse },
  { method: 'DELETE', path: '/v1/responses/:id', style: 'openai', handler: deleteResponse },
  { method: 'GET', path: '/v1/responses/:id/input_items', style: 'openai', handler: listInputItems },
  { method: 'POST', path: '/v1/chat/completions', style: 'openai', handler: chatCompletions },
  { method: 'POST', path: '/v1/messages', style: 'anthropic', handler: createMessage },
  { method: 'POST', path: '/v1/messages/count_tokens', style: 'anthropic', handler: countMessageTokens },
  { method: 'POST', path: '/v1/images/generations', style: 'openai', handler: generateImages },
  { method: 'POST', path: '/v1/images/edits', style: 'openai', handler: editImages },
  { method: 'POST', path: '/v1/video/generations', style: 'openai', handler: createVideo },
  { method: 'GET', path: '/v1/video/generations/:task_id', style: 'openai', handler: getVideo },
  { method: 'GET', path: '/v1/videos/:task_id/content', style: 'openai', handler: getVideoContent },
  { method: 'POST', path: '/v1/audio/speech', style: 'openai', handler: createSpeech },
];
