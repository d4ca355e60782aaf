import { invalidRequest } from '../../errors.js';
import type { Json } from '../../json.js';
import { parseDataUrl } from '../decode-helpers.js';
import type { IRFilePart, IRImagePart } from '../ir.js';
import { sniffImageType } from '../messages/encode-request.js';
import type { StorageUriCheck } from '../storage-uris.js';

/** Converse's image and document blocks: what Bedrock takes (bytes, or `s3://` where allowed), typed as it wants. */

const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};
/**
 * An image block. An `s3://` URI is Bedrock's to read, with the gateway's IAM identity: it goes
 * on only when `storage` allows it.
 */
export function imageBlock(part: IRImagePart, param: string, storage: StorageUriCheck): Json {
  let data = part.data;
  let mediaType = part.mediaType;
  if (data === undefined && part.url !== undefined) {
    if (part.url.startsWith('s3://')) {
      storage(part.url, part.param ?? param);
      return { format: imageFormat(mediaType ?? typeFromName(part.url), param), source: { s3Location: { uri: part.url } } };
    }
    const parsed = parseDataUrl(part.url);
    if (!parsed) throw invalidRequest('Bedrock does not fetch image URLs: send the image as base64 data (a data URL) or an s3:// URI.', part.param ?? param);
    ({ data, mediaType } = parsed);
  }
  if (data === undefined) throw invalidRequest('An image part has neither a URL nor data.', param);
  // Bedrock checks the bytes against `format`: the magic bytes win over the declared type.
  return { format: imageFormat(sniffImageType(data) ?? mediaType, param), source: { bytes: data } };
}

function imageFormat(mediaType: string | undefined, param: string): string {
  const format = mediaType ? IMAGE_FORMATS[mediaType.toLowerCase()] : undefined;
  if (!format) throw invalidRequest(`Image type ${mediaType ?? '(unknown)'} is not supported by this model; use PNG, JPEG, GIF or WebP.`, param);
  return format;
}

/** A document block; an `s3://` URI goes on only when `storage` allows it, as for images. */
export function documentBlock(part: IRFilePart, param: string, storage: StorageUriCheck): Json {
  let data = part.data;
  let mediaType = part.mediaType;
  if (data === undefined && part.url !== undefined) {
    const parsed = parseDataUrl(part.url);
    if (parsed) ({ data, mediaType } = parsed);
    else if (!part.url.startsWith('s3://'))
      throw invalidRequest('Bedrock does not fetch file URLs: send the file as base64 data or an s3:// URI.', part.param ?? param);
    else storage(part.url, part.param ?? param);
  }
  if (data === undefined && part.url === undefined) {
    throw invalidRequest('Files must be sent inline (base64 data) for this model; file ids are not supported.', param);
  }
  const type = mediaType ?? typeFromName(part.filename ?? part.url ?? '');
  const format = type ? DOCUMENT_FORMATS[type.toLowerCase()] : undefined;
  if (!format) throw invalidRequest(`File type ${type ?? '(unknown)'} is not supported by this model; use PDF, CSV, DOC(X), XLS(X), HTML, TXT or MD.`, param);
  return { format, name: documentName(part.filename), source: data !== undefined ? { bytes: data } : { s3Location: { uri: part.url } } };
}

/**
 * Converse wants a document name of letters, digits, single spaces, hyphens, parentheses and
 * square brackets: the file name without its extension, cleaned, or `document`.
 */
function documentName(filename: string | undefined): string {
  const base = (filename ?? '').replace(/\.[^.]*$/, '');
  const clean = base
    .replace(/[^A-Za-z0-9\s\-()[\]]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return clean === '' ? 'document' : clean.slice(0, 200);
}

const EXTENSION_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  csv: 'text/csv',
  doc: 'application/msword',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  html: 'text/html',
  txt: 'text/plain',
  md: 'text/markdown',
};

function typeFromName(name: string): string | undefined {
  const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(name)?.[1]?.toLowerCase();
  return extension ? EXTENSION_TYPES[extension] : undefined;
}
