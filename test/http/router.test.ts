import { describe, expect, it } from 'vitest';
import type { Route } from '../../src/http/route.js';
import { Router } from '../../src/http/router.js';
import { openaiStyle } from '../../src/protocols/openai/style.js';

const handler = async () => new Response(null);
const route = (method: Route['method'], path: string): Route => ({ method, path, style: openaiStyle, handler });

const list = route('GET', '/v1beta/models');
const one = route('GET', '/v1beta/models/:model+');
const generate = route('POST', '/v1beta/models/:model+:generateContent');
const stream = route('POST', '/v1beta/models/:model+:streamGenerateContent');
const video = route('GET', '/v1/videos/:task_id/content');
const router = new Router([list, one, generate, stream, video]);

describe('Router', () => {
  it('matches a static path by lookup', () => {
    expect(router.match('GET', '/v1beta/models')).toEqual({ kind: 'found', route: list, params: {} });
  });

  it('takes a parameter before a literal suffix in the same segment', () => {
    expect(router.match('POST', '/v1beta/models/gemini-2.5-flash:generateContent')).toEqual({
      kind: 'found',
      route: generate,
      params: { model: 'gemini-2.5-flash' },
    });
    expect(router.match('POST', '/v1beta/models/gemini-2.5-flash:streamGenerateContent')).toMatchObject({
      route: stream,
      params: { model: 'gemini-2.5-flash' },
    });
  });

  it('keeps colons inside the parameter and takes only the last suffix', () => {
    expect(router.match('POST', '/v1beta/models/llama3:8b:generateContent')).toMatchObject({ route: generate, params: { model: 'llama3:8b' } });
  });

  it('lets a `+` parameter span segments, slashes kept, and decodes escapes', () => {
    expect(router.match('POST', '/v1beta/models/openai/gpt-4o:generateContent')).toMatchObject({ route: generate, params: { model: 'openai/gpt-4o' } });
    expect(router.match('POST', '/v1beta/models/openai%2Fgpt-4o:generateContent')).toMatchObject({ params: { model: 'openai/gpt-4o' } });
    expect(router.match('GET', '/v1beta/models/models/gemini-2.5-pro')).toMatchObject({ route: one, params: { model: 'models/gemini-2.5-pro' } });
  });

  it('refuses an empty parameter, an empty segment inside a `+` one, and a bad escape', () => {
    expect(router.match('POST', '/v1beta/models/:generateContent')).toMatchObject({ kind: 'method-not-allowed', allow: ['GET'] });
    expect(router.match('POST', '/v1beta/models/a//b:generateContent')).toEqual({ kind: 'not-found' });
    expect(router.match('GET', '/v1beta/models/%E0%A4%A')).toEqual({ kind: 'not-found' });
    expect(router.match('GET', '/v1/videos//content')).toEqual({ kind: 'not-found' });
  });

  it('answers method-not-allowed with the methods the path takes', () => {
    expect(router.match('DELETE', '/v1beta/models/gemini:generateContent')).toMatchObject({ kind: 'method-not-allowed', allow: ['GET', 'POST'] });
    expect(router.match('HEAD', '/v1beta/models/gemini')).toMatchObject({ kind: 'found', route: one });
  });

  it('matches a plain parameter segment exactly, suffix or not', () => {
    expect(router.match('GET', '/v1/videos/task-1/content')).toMatchObject({ route: video, params: { task_id: 'task-1' } });
    expect(router.match('GET', '/v1/videos/task-1/content/more')).toEqual({ kind: 'not-found' });
  });

  it('refuses a route line with a `+` parameter before the last segment', () => {
    expect(() => new Router([route('GET', '/v1/:a+/b')])).toThrow(/must be the last segment/);
  });
});
