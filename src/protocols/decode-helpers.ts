import { invalidRequest } from '../errors.js';
import { isRecord, type Json } from '../json.js';
import type { CacheControl, IRFilePart, IRImagePart } from './ir.js';

/**
 * Small readers shared by the request decoders. Each takes the `param` path as the client wrote
 * it (`messages[2].content[0]`) so a 400 names the exact field at fault.
 */

export function expectRecord(value: unknown, param: string): Json {
  if (!isRecord(value)) throw invalidRequest(`'${param}' must be an object.`, param);
  return value;
}

export function expectArray(value: unknown, param: string): unknown[] {
  if (!Array.isArray(value)) throw invalidRequest(`'${param}' must be an array.`, param);
  return value;
}

export function expectString(obj: Json, key: string, param: string): string {
  const value = obj[key];
  if (typeof value !== 'string') throw invalidRequest(`'${param}' must be a string.`, param);
  return value;
}

/** `null` counts as absent: several clients send explicit nulls for unset fields. */
export function optString(obj: Json, key: string, param: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidRequest(`'${param}' must be a string.`, param);
  return value;
}

export function optNumber(obj: Json, key: string, param: string): number | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidRequest(`'${param}' must be a number.`, param);
  return value;
}

export function optBoolean(obj: Json, key: string, param: string): boolean | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidRequest(`'${param}' must be a boolean.`, param);
  return value;
}

export function optRecord(obj: Json, key: string, param: string): Json | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  return expectRecord(value, param);
}

export function optArray(obj: Json, key: string, param: string): unknown[] | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  return expectArray(value, param);
}

export function isPresent(obj: Json, key: string): boolean {
  return obj[key] !== undefined && obj[key] !== null;
}

/** The 400 for a field the IR cannot carry with the same meaning. */
export function unsupported(param: string, what = `'${param}'`): never {
  throw invalidRequest(`${what} is not supported by this gateway.`, param, 'unsupported_parameter');
}

/** Copies the listed fields that are set (not null) into the passthrough bag. */
export function pickPassthrough(body: Json, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (isPresent(body, key)) out[key] = body[key];
  }
  return out;
}

/** `data:<mime>;base64,<b64>` split into its parts; undefined for anything else. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  // Only the header (up to the first comma) goes through the regex: a regex running over the
  // data, megabytes of base64, blocked the event loop for about 20 ms per 20 MB.
  const comma = url.startsWith('data:') ? url.indexOf(',') : -1;
  if (comma === -1) return undefined;
  const match = /^data:([^;,]*)((?:;[^;,]*)*?);base64$/.exec(url.slice(0, comma));
  if (!match) return undefined;
  return { mediaType: match[1] || 'application/octet-stream', data: url.slice(comma + 1) };
}

const DETAILS = new Set(['auto', 'low', 'high']);

/**
 * An image by URL (found at `param` in the request); base64 data URLs are split so upstreams that
 * want media type + data get them.
 */
export function imageFromUrl(url: string, detail: unknown, param: string): IRImagePart {
  const part: IRImagePart = { type: 'image' };
  const parsed = parseDataUrl(url);
  if (parsed) {
    part.data = parsed.data;
    part.mediaType = parsed.mediaType;
  } else {
    part.url = url;
    part.param = param;
  }
  // Responses' `original` has no equivalent elsewhere; `high` is the closest level of detail.
  const level = detail === 'original' ? 'high' : detail;
  if (typeof level === 'string' && DETAILS.has(level)) part.detail = level as 'auto' | 'low' | 'high';
  return part;
}

/** An inline file given as a data URL or as bare base64 (then typed from its filename, if possible). */
export function fileFromData(fileData: string, filename: string | undefined): IRFilePart {
  const part: IRFilePart = { type: 'file' };
  const parsed = parseDataUrl(fileData);
  if (parsed) {
    part.data = parsed.data;
    part.mediaType = parsed.mediaType;
  } else {
    part.data = fileData;
    if (filename && /\.pdf$/i.test(filename)) part.mediaType = 'application/pdf';
  }
  if (filename !== undefined) part.filename = filename;
  return part;
}

/** `param` is the block's path; '' for the top-level field. */
export function optCacheControl(obj: Json, param: string): CacheControl | undefined {
  const value = obj.cache_control;
  if (value === undefined || value === null) return undefined;
  const at = param ? `${param}.cache_control` : 'cache_control';
  const record = expectRecord(value, at);
  if (typeof record.type !== 'string') throw invalidRequest(`'${at}.type' must be a string.`, `${at}.type`);
  return record as CacheControl;
}

/** Copies a block's `cache_control` onto its IR part (where the IR can carry it). */
export function withCache<T extends { cacheControl?: CacheControl | undefined }>(part: T, block: Json, param: string): T {
  const cacheControl = optCacheControl(block, param);
  if (cacheControl) part.cacheControl = cacheControl;
  return part;
}
