import { GatewayError } from '../../errors.js';
import { postJson } from '../http/json-call.js';
import type { UpstreamClient } from '../http/upstream-client.js';
import type { ImageResult, UploadedFile } from '../media.js';
import type { ImageCapability } from '../provider.js';
import { toImageResult } from '../openai/openai-images.js';

/** OpenAI image fields that Seedream has no equivalent for: a 400 rather than a silent drop. */
const UNSUPPORTED = ['quality', 'background', 'moderation', 'output_compression', 'input_fidelity'];

/**
 * Seedream on Ark (`POST /images/generations`): text-to-image, reference images (`image`, one
 * URL/data URL or several) and edits, which Ark does as generation from the uploaded images
 * (sent as data URLs). One image per request (`sequential_image_generation: "disabled"`; the
 * family rule already made `n` 1, and Ark has no `n`). A streamed request is answered whole and
 * sent as `completed` events (Ark's own stream has no partial images), so the image is asked for
 * as `b64_json` then.
 */
export function arkImages(client: UpstreamClient): ImageCapability {
  return {
    async generate(request, call) {
      const { model, prompt, image, n: _n, size, response_format, stream, partial_images: _partials, ...rest } = request;
      const body = {
        ...supportedExtras(rest),
        model,
        prompt,
        image,
        ...sizeField(size),
        response_format: stream === true ? 'b64_json' : (response_format ?? 'url'),
        sequential_image_generation: 'disabled',
        stream: false,
      };
      return generate(client, body, call.signal);
    },

    async edit({ fields, images }, call) {
      const { model, prompt, n: _n, size, stream, partial_images: _partials, response_format, ...rest } = fields;
      const references = images.map(dataUrl);
      const body = {
        ...supportedExtras(rest),
        model,
        prompt,
        image: references.length === 1 ? references[0] : references,
        ...sizeField(size),
        // OpenAI clients of /images/edits expect base64 unless they asked for a URL.
        response_format: stream === true ? 'b64_json' : typeof response_format === 'string' ? response_format : 'b64_json',
        sequential_image_generation: 'disabled',
        stream: false,
      };
      return generate(client, body, call.signal);
    },
  };
}

async function generate(client: UpstreamClient, body: Record<string, unknown>, signal: AbortSignal): Promise<ImageResult> {
  const json = (await postJson(client, '/images/generations', body, { signal })) as Record<string, unknown>;
  const { model: _model, ...rest } = json;
  return toImageResult(rest);
}

/** Extra fields pass on (Ark's own `seed`, `watermark`, `guidance_scale`…), OpenAI-only ones are refused. */
function supportedExtras(fields: Record<string, unknown>): Record<string, unknown> {
  for (const name of UNSUPPORTED) {
    if (fields[name] !== undefined) {
      throw new GatewayError({ status: 400, param: name, code: 'unsupported_parameter', message: `The Seedream model does not support '${name}'.` });
    }
  }
  const { output_format, ...rest } = fields;
  // Seedream writes jpeg or png; `output_format` is passed on only when it names one of those.
  if (output_format !== undefined && output_format !== 'png' && output_format !== 'jpeg') {
    throw new GatewayError({
      status: 400,
      param: 'output_format',
      code: 'unsupported_value',
      message: `The Seedream model writes 'png' or 'jpeg', received ${JSON.stringify(output_format)}.`,
    });
  }
  return { ...rest, output_format };
}

/** `auto` means "the model's default", which on Ark is no `size` at all. */
function sizeField(size: string | undefined): Record<string, string> {
  return size === undefined || size === 'auto' ? {} : { size };
}

function dataUrl(file: UploadedFile): string {
  const type = /^image\//.test(file.mimeType) ? file.mimeType : 'image/png';
  return `data:${type};base64,${file.data.toString('base64')}`;
}
