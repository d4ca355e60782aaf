import { describe, expect, it } from 'vitest';
import { rawPredictBody, rawPredictText } from '../../src/providers/vertex/raw-predict-body.js';

/** The Messages body Vertex's rawPredict takes: no `model`, `anthropic_version` set. */
describe('rawPredictText', () => {
  const edited = (json: string) => JSON.parse(rawPredictText(json).join(''));

  it.each([
    ['model first', '{"model":"claude","max_tokens":5,"messages":[]}'],
    ['model last', '{"max_tokens":5,"messages":[] , "model" : "claude" }'],
    ['model alone', '{"model":"claude"}'],
    ['model twice', '{"model":"a","max_tokens":5,"model":"b"}'],
    ['model twice, adjacent, last', '{"max_tokens":5,"model":"a","model":"b"}'],
    ['escaped key', '{"mod\\u0065l":"claude","max_tokens":5}'],
    ['version already set', '{"anthropic_version":"bedrock-2023-05-31","model":"c","max_tokens":5}'],
    ['byte order mark and spaces', '\uFEFF {\n  "max_tokens": 5,\n  "model": "claude"\n}'],
    ['empty object', '{}'],
  ])('%s', (_name, json) => {
    const { model: _model, ...rest } = JSON.parse(json.replace(/^\uFEFF/, ''));
    expect(edited(json)).toEqual({ ...rest, anthropic_version: 'vertex-2023-10-16' });
  });

  it('leaves nested model fields and the text around them alone', () => {
    const json = '{"model":"c","messages":[{"role":"user","content":"{\\"model\\":1}"}],"metadata":{"model":"x"}}';
    expect(rawPredictText(json).join('')).toBe(
      '{"anthropic_version":"vertex-2023-10-16","messages":[{"role":"user","content":"{\\"model\\":1}"}],"metadata":{"model":"x"}}',
    );
  });

  it('matches the object form', () => {
    expect(rawPredictBody({ model: 'c', max_tokens: 5 })).toEqual({ max_tokens: 5, anthropic_version: 'vertex-2023-10-16' });
  });
});
