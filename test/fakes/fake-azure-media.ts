import { sendJson, startMediaServer, type MediaRequest, type MediaServer } from './media-server.js';
import { FAKE_PNG_B64 } from './fake-openai-media.js';
import { answerTranscription } from './fake-openai-transcriptions.js';
import { AZURE_API_VERSIONS, V1_API_VERSIONS } from './fake-azure.js';

/** Media deployments of the fake resource and the models behind them. */
export const AZURE_MEDIA_DEPLOYMENTS: Record<string, string> = {
  'whisper-prod': 'whisper-1',
  'transcribe-prod': 'gpt-4o-transcribe',
  'tts-prod': 'tts-1',
  'image-prod': 'gpt-image-1',
};
/** The bytes the fake speaks. */
export const FAKE_AZURE_SPEECH = Buffer.from('ID3 fake mp3 frames');

const INNER_KEY = 'inner-key';

/**
 * A fake Azure OpenAI resource's media endpoints (transcriptions are multipart, so beside the
 * JSON fake): `/openai/deployments/{d}/audio/transcriptions|audio/speech|images/generations?api-version=…`
 * and `/openai/v1/…` (the deployment in the body's or form's `model`), with Azure's `api-version`
 * rules and `api-key` auth. A transcription form is then checked and answered as OpenAI's fake
 * does, for the model the deployment runs. Every request is recorded.
 */
export async function startFakeAzureMedia(apiKey = 'az-key'): Promise<MediaServer> {
  return startMediaServer((request, response) => {
    const fail = (status: number, code: string, message: string) => sendJson(response, { error: { code, message } }, status);
    const query = new URL(request.url, 'http://fake').searchParams;
    const dated = /^\/openai\/deployments\/([^/]+)\/(audio\/transcriptions|audio\/speech|images\/generations)$/.exec(request.path);
    const v1 = /^\/openai\/v1\/(audio\/transcriptions|audio\/speech|images\/generations)$/.exec(request.path);
    const operation = dated?.[2] ?? v1?.[1];
    if (request.method !== 'POST' || !operation) return fail(404, '404', 'Resource not found');
    if (dated && query.get('api-version') === null) return fail(404, '404', 'Resource not found');
    if (dated && !AZURE_API_VERSIONS.includes(query.get('api-version')!)) return fail(400, 'BadRequest', 'API version not supported');
    if (v1 && query.has('api-version') && !V1_API_VERSIONS.includes(query.get('api-version')!)) return fail(400, 'BadRequest', 'API version not supported');
    if (request.headers.authorization !== undefined || request.headers['api-key'] !== apiKey) {
      return fail(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
    }
    const modelPart = request.parts?.find((part) => part.name === 'model' && part.data === undefined);
    const deployment = dated ? decodeURIComponent(dated[1]!) : (modelPart?.value ?? request.json?.model);
    const model = deployment === undefined ? undefined : AZURE_MEDIA_DEPLOYMENTS[deployment];
    if (!model) {
      return fail(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist.');
    }
    if (operation === 'audio/speech') {
      if (model !== 'tts-1' || typeof request.json?.input !== 'string' || typeof request.json.voice !== 'string') {
        return sendJson(
          response,
          { error: { message: "Missing required parameter: 'input' or 'voice'.", type: 'invalid_request_error', param: 'input', code: null } },
          400,
        );
      }
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      response.end(FAKE_AZURE_SPEECH);
      return;
    }
    if (operation === 'images/generations') {
      if (model !== 'gpt-image-1' || typeof request.json?.prompt !== 'string') {
        return sendJson(
          response,
          { error: { message: "Missing required parameter: 'prompt'.", type: 'invalid_request_error', param: 'prompt', code: null } },
          400,
        );
      }
      // Azure adds its content filter results to each image.
      return sendJson(response, {
        created: 1_700_000_000,
        data: [{ b64_json: FAKE_PNG_B64, content_filter_results: {}, prompt_filter_results: {} }],
        usage: { input_tokens: 5, output_tokens: 10, total_tokens: 15 },
      });
    }
    // What the deployment's model sees: OpenAI's form, its own model name.
    const asOpenAI: MediaRequest = {
      ...request,
      headers: { ...request.headers, authorization: `Bearer ${INNER_KEY}` },
      parts: (request.parts ?? []).map((part) => (part === modelPart ? { ...part, value: model } : part)),
    };
    return answerTranscription(asOpenAI, response, INNER_KEY);
  });
}
