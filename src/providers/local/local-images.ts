import { GatewayError } from '../../errors.js';
import { yieldToLoop } from '../../http/yield-to-loop.js';
import { unixSeconds } from '../../ids.js';
import type { GeneratedImage, ImageEditRequest, ImageGenerationRequest, ImageResult, ImageStream, ImageStreamEvent, UploadedFile } from '../media.js';
import { mix, paletteOf, seedBytes } from './palette.js';
import { decodePng, encodePng, type RgbaImage } from '../codecs/png.js';

/** The local image model draws, and edits, at most this many pixels per side. */
const MAX_SIDE = 2048;
const DEFAULT_SIZE = { width: 1024, height: 1024 };
/**
 * Pixels of all the images of one request (`n` × width × height): four of 2048x2048, sixteen of
 * 1024x1024. The schema lets `n` reach 128, which at 2048² blocked the process for half a minute.
 */
export const MAX_LOCAL_IMAGE_PIXELS = 16 * 1024 * 1024;
/** OpenAI's range for `partial_images`. */
const MAX_PARTIALS = 3;

/**
 * The local image model: a picture drawn from the prompt (a gradient, a disc and a bar in
 * colours hashed from the prompt, so the same prompt draws the same picture), as a real PNG.
 * Streamed, it first sends `partial_images` coarser versions (pixelated, finer each time).
 * `response_format: "url"` answers a `data:` URL, since nothing is hosted. One picture is drawn,
 * or encoded, per turn of the event loop, so other requests are served in between.
 */
export async function localGenerateImage(request: ImageGenerationRequest): Promise<ImageResult | ImageStream> {
  const size = parseSize(request.size);
  checkFormats(request.output_format, request.response_format);
  if (request.image !== undefined) {
    throw new GatewayError({
      status: 400,
      param: 'image',
      code: 'unsupported_parameter',
      message: 'The local image model does not take reference images; use /v1/images/edits to change an image.',
    });
  }
  const count = checkPixels(request.n ?? 1, size);
  const draw = () => drawPicture(request.prompt, size.width, size.height);
  const extra = details(size, request);
  if (request.stream === true) {
    const partials = partialCount(request.partial_images);
    return {
      events: (async function* () {
        for (let index = 0; index < count; index++) {
          await yieldToLoop();
          const picture = draw();
          for (let step = 0; step < partials; step++) {
            await yieldToLoop();
            yield partialEvent(pixelate(picture, 4 << (partials - step)), step, extra);
          }
          await yieldToLoop();
          yield { type: 'completed', b64_json: b64(picture), ...extra, usage: usage(request.prompt, size, 1) } satisfies ImageStreamEvent;
        }
      })(),
    };
  }
  const data = await eachImage(count, draw, request.response_format);
  return { created: unixSeconds(), data, extra, usage: usage(request.prompt, size, count) };
}

/**
 * Local edits: the first image (a PNG) is blended half-way with the prompt's picture, only where
 * the mask is transparent when a mask is given (OpenAI's convention). Further images are
 * accepted as references and otherwise unused. The output has the input's size.
 */
export async function localEditImage(request: ImageEditRequest): Promise<ImageResult | ImageStream> {
  const { fields } = request;
  checkFormats(fields.output_format, typeof fields.response_format === 'string' ? fields.response_format : undefined);
  const source = readPng(request.images[0]!, request.images.length === 1 ? 'image' : 'image[0]');
  const mask = request.mask ? readPng(request.mask, 'mask') : undefined;
  if (mask && (mask.width !== source.width || mask.height !== source.height)) {
    throw new GatewayError({
      status: 400,
      param: 'mask',
      code: 'invalid_value',
      message: `The mask must have the image's size (${source.width}x${source.height}), received ${mask.width}x${mask.height}.`,
    });
  }
  const size = { width: source.width, height: source.height };
  if (fields.size !== undefined && fields.size !== 'auto' && fields.size !== `${size.width}x${size.height}`) {
    throw new GatewayError({
      status: 400,
      param: 'size',
      code: 'unsupported_value',
      message: `The local image model keeps the input's size: 'size' must be 'auto' or '${size.width}x${size.height}', received ${JSON.stringify(fields.size)}.`,
    });
  }
  const count = checkPixels(fields.n ?? 1, size);
  const target = drawPicture(fields.prompt, size.width, size.height);
  const edit = (strength: number) => blend(source, target, mask, strength);
  const extra = details(size, fields);
  if (fields.stream === true) {
    const partials = partialCount(fields.partial_images);
    return {
      events: (async function* () {
        for (let index = 0; index < count; index++) {
          for (let step = 0; step < partials; step++) {
            await yieldToLoop();
            yield partialEvent(edit((0.5 * (step + 1)) / (partials + 1)), step, extra);
          }
          await yieldToLoop();
          yield { type: 'completed', b64_json: b64(edit(0.5)), ...extra, usage: usage(fields.prompt, size, 1) } satisfies ImageStreamEvent;
        }
      })(),
    };
  }
  const data = await eachImage(count, () => edit(0.5), typeof fields.response_format === 'string' ? fields.response_format : undefined);
  return { created: unixSeconds(), data, extra, usage: usage(fields.prompt, size, count) };
}

/** `count` pictures, each drawn in one turn of the event loop and encoded in the next. */
async function eachImage(count: number, draw: () => RgbaImage, responseFormat: string | undefined): Promise<GeneratedImage[]> {
  const data: GeneratedImage[] = [];
  for (let index = 0; index < count; index++) {
    await yieldToLoop();
    const picture = draw();
    await yieldToLoop();
    data.push(imageData(picture, responseFormat));
  }
  return data;
}

/** `n`, when `n` pictures of `size` stay within `MAX_LOCAL_IMAGE_PIXELS`; else a 400 naming `n`. */
function checkPixels(n: number, size: { width: number; height: number }): number {
  const most = Math.floor(MAX_LOCAL_IMAGE_PIXELS / (size.width * size.height));
  if (n > most) {
    throw new GatewayError({
      status: 400,
      param: 'n',
      code: 'unsupported_value',
      message: `The local image model draws at most ${MAX_LOCAL_IMAGE_PIXELS} pixels a request: 'n' may be at most ${most} at ${size.width}x${size.height}, received ${n}.`,
    });
  }
  return n;
}

/** The prompt's picture: a diagonal gradient, a disc and a bar, placed by the prompt's hash. */
export function drawPicture(prompt: string, width: number, height: number): RgbaImage {
  const seed = seedBytes(prompt);
  const { from, to, accent } = paletteOf(seed);
  const pixels = new Uint8Array(width * height * 4);
  const cx = width * (0.25 + (seed[2]! / 255) * 0.5);
  const cy = height * (0.25 + (seed[3]! / 255) * 0.5);
  const radius = Math.min(width, height) * (0.15 + (seed[4]! / 255) * 0.15);
  const barTop = Math.floor(height * 0.8);
  const barBottom = Math.floor(height * 0.86);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const inDisc = (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
      const inBar = y >= barTop && y < barBottom && x >= width * 0.1 && x < width * 0.9;
      const [r, g, b] = inDisc ? accent : inBar ? mix(accent, [255, 255, 255], 0.6) : mix(from, to, (x / width + y / height) / 2);
      const p = (y * width + x) * 4;
      pixels[p] = r;
      pixels[p + 1] = g;
      pixels[p + 2] = b;
      pixels[p + 3] = 255;
    }
  }
  return { width, height, pixels };
}

/** `1024x1024`-style sizes, 16 to 2048 pixels a side; absent or `auto` → 1024x1024. */
function parseSize(size: string | undefined): { width: number; height: number } {
  if (size === undefined || size === 'auto') return DEFAULT_SIZE;
  const match = /^(\d{1,4})x(\d{1,4})$/.exec(size);
  const width = Number(match?.[1]);
  const height = Number(match?.[2]);
  if (!match || width < 16 || height < 16 || width > MAX_SIDE || height > MAX_SIDE) {
    throw new GatewayError({
      status: 400,
      param: 'size',
      code: 'unsupported_value',
      message: `The local image model takes a 'size' of 'auto' or WIDTHxHEIGHT with 16 to ${MAX_SIDE} pixels a side, received ${JSON.stringify(size)}.`,
    });
  }
  return { width, height };
}

function checkFormats(outputFormat: string | undefined, responseFormat: string | undefined): void {
  if (outputFormat !== undefined && outputFormat !== 'png') {
    throw new GatewayError({
      status: 400,
      param: 'output_format',
      code: 'unsupported_value',
      message: `The local image model writes PNG only: 'output_format' must be 'png', received ${JSON.stringify(outputFormat)}.`,
    });
  }
  if (responseFormat !== undefined && responseFormat !== 'b64_json' && responseFormat !== 'url') {
    throw new GatewayError({
      status: 400,
      param: 'response_format',
      code: 'unsupported_value',
      message: `The local image model answers 'b64_json' or 'url': 'response_format' was ${JSON.stringify(responseFormat)}.`,
    });
  }
}

function partialCount(value: number | undefined): number {
  const count = value ?? 0;
  if (count < 0 || count > MAX_PARTIALS) {
    throw new GatewayError({
      status: 400,
      param: 'partial_images',
      code: 'unsupported_value',
      message: `The local image model sends 0 to ${MAX_PARTIALS} partial images: 'partial_images' was ${count}.`,
    });
  }
  return count;
}

function readPng(file: UploadedFile, param: string): RgbaImage {
  try {
    return decodePng(file.data, { maxSide: MAX_SIDE });
  } catch (error) {
    throw new GatewayError({
      status: 400,
      param,
      code: 'invalid_image',
      message: `The local image model edits PNG images; '${param}' (${file.filename}) could not be read: ${(error as Error).message}.`,
    });
  }
}

/** `source` blended towards `target` by `strength`, where the mask (if any) is transparent. */
function blend(source: RgbaImage, target: RgbaImage, mask: RgbaImage | undefined, strength: number): RgbaImage {
  const pixels = source.pixels.slice();
  for (let p = 0; p < pixels.length; p += 4) {
    if (mask && mask.pixels[p + 3] !== 0) continue;
    for (let c = 0; c < 3; c++) pixels[p + c] = Math.round(source.pixels[p + c]! * (1 - strength) + target.pixels[p + c]! * strength);
    pixels[p + 3] = 255;
  }
  return { width: source.width, height: source.height, pixels };
}

/** Each `block`×`block` square takes the colour of its top-left pixel: a coarse preview. */
function pixelate(image: RgbaImage, block: number): RgbaImage {
  const { width, height } = image;
  const pixels = new Uint8Array(image.pixels.length);
  for (let y = 0; y < height; y++) {
    const sy = y - (y % block);
    for (let x = 0; x < width; x++) {
      const from = (sy * width + (x - (x % block))) * 4;
      pixels.set(image.pixels.subarray(from, from + 4), (y * width + x) * 4);
    }
  }
  return { width, height, pixels };
}

function partialEvent(image: RgbaImage, index: number, extra: Record<string, unknown>): ImageStreamEvent {
  return { type: 'partial_image', b64_json: b64(image), partial_image_index: index, ...extra };
}

function imageData(image: RgbaImage, responseFormat: string | undefined): GeneratedImage {
  const data = b64(image);
  return responseFormat === 'url' ? { url: `data:image/png;base64,${data}` } : { b64_json: data };
}

function b64(image: RgbaImage): string {
  return Buffer.from(encodePng(image)).toString('base64');
}

function details(size: { width: number; height: number }, request: { quality?: string | undefined; background?: unknown }): Record<string, unknown> {
  return {
    size: `${size.width}x${size.height}`,
    quality: request.quality ?? 'auto',
    background: typeof request.background === 'string' ? request.background : 'opaque',
    output_format: 'png',
  };
}

/** Estimated like the text models (a token per four characters) plus a token per 32×32 tile. */
function usage(prompt: string, size: { width: number; height: number }, count: number): Record<string, unknown> {
  const text = Math.ceil(prompt.length / 4);
  const output = Math.ceil((size.width * size.height) / 1024) * count;
  return { input_tokens: text, input_tokens_details: { text_tokens: text, image_tokens: 0 }, output_tokens: output, total_tokens: text + output };
}
