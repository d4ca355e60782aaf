import type { Route } from '../http/route.js';
import { chatCompletions } from './chat.js';
import { editImages } from './image-edits.js';
import { generateImages } from './images.js';
import { createMessage } from './messages.js';
import { listModels } from './models.js';
import { createResponse } from './responses.js';
import { createSpeech } from './speech.js';
import { createVideo, getVideo, getVideoContent } from './video.js';

/** Every endpoint of the spec's section 4, paths below the base path. */
export const routes: readonly Route[] = [
  { method: 'GET', path: '/v1/models', style: 'openai', handler: listModels },
  { method: 'POST', path: '/v1/responses', style: 'openai', handler: createResponse },
  { method: 'POST', path: '/responses', style: 'openai', handler: createResponse },
  { method: 'POST', path: '/v1/chat/completions', style: 'openai', handler: chatCompletions },
  { method: 'POST', path: '/v1/messages', style: 'anthropic', handler: createMessage },
  { method: 'POST', path: '/v1/images/generations', style: 'openai', handler: generateImages },
  { method: 'POST', path: '/v1/images/edits', style: 'openai', handler: editImages },
  { method: 'POST', path: '/v1/video/generations', style: 'openai', handler: createVideo },
  { method: 'GET', path: '/v1/video/generations/:task_id', style: 'openai', handler: getVideo },
  { method: 'GET', path: '/v1/videos/:task_id/content', style: 'openai', handler: getVideoContent },
  { method: 'POST', path: '/v1/audio/speech', style: 'openai', handler: createSpeech },
];
