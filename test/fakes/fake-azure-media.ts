import { sendJson, startMediaServer, type MediaRequest, type MediaServer } from './media-server.js';
import { answerTranscription } from './fake-openai-transcriptions.js';
import { AZURE_API_VERSIONS, V1_API_VERSIONS } from './fake-azure.js';

/** Transcription deployments of the fake resource and the models behind them. */
export const AZURE_AUDIO_DEPLOYMENTS: Record<string, string> = { 'whisper-prod': 'whisper-1', 'transcribe-prod': 'gpt-4o-transcribe' };

const INNER_KEY = 'inner-key';

/**
 * A fake Azure OpenAI resource's audio transcriptions (multipart, so beside the JSON fake):
 * `/openai/deployments/{d}/audio/transcriptions?api-version=…` and
 * `/openai/v1/audio/transcriptions` (the deployment in the form's `model`), with Azure's
 * `api-version` rules and `api-key` auth. The form is then checked and answered as OpenAI's fake
 * does, for the model the deployment runs. Every request is recorded.
 */
export async function startFakeAzureAudio(apiKey = 'az-key'): Promise<MediaServer> {
  return startMediaServer((request, response) => {
    const fail = (status: number, code: string, message: string) => sendJson(response, { error: { code, message } }, status);
    const query = new URL(request.url, 'http://fake').searchParams;
    const dated = /^\/openai\/deployments\/([^/]+)\/audio\/transcriptions$/.exec(request.path);
    const v1 = request.path === '/openai/v1/audio/transcriptions';
    if (request.method !== 'POST' || (!dated && !v1)) return fail(404, '404', 'Resource not found');
    if (dated && query.get('api-version') === null) return fail(404, '404', 'Resource not found');
    if (dated && !AZURE_API_VERSIONS.includes(query.get('api-version')!)) return fail(400, 'BadRequest', 'API version not supported');
    if (v1 && query.has('api-version') && !V1_API_VERSIONS.includes(query.get('api-version')!)) return fail(400, 'BadRequest', 'API version not supported');
    if (request.headers.authorization !== undefined || request.headers['api-key'] !== apiKey) {
      return fail(401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
    }
    const modelPart = request.parts?.find((part) => part.name === 'model' && part.data === undefined);
    const deployment = dated ? decodeURIComponent(dated[1]!) : modelPart?.value;
    const model = deployment === undefined ? undefined : AZURE_AUDIO_DEPLOYMENTS[deployment];
    if (!model) {
      return fail(404, 'DeploymentNotFound', 'The API deployment for this resource does not exist.');
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
