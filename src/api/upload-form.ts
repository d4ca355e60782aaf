import { type MultipartBody, readMultipartBody } from '../http/read-multipart.js';
import type { RouteContext } from '../http/route.js';

/** Largest text field of an upload form (the prompt), and the most text fields accepted. */
const FIELD_BYTES = 1024 * 1024;
const FIELDS = 64;

/**
 * The multipart form of an upload route (image edits, transcriptions), read within the
 * gateway's upload limits; `fileField` is the field a 413 for too many files names.
 */
export function readUploadForm({ request, options }: RouteContext, fileField: string): Promise<MultipartBody> {
  return readMultipartBody(request, {
    fileBytes: options.limits.uploadFileBytes,
    files: options.limits.uploadFiles,
    fieldBytes: FIELD_BYTES,
    fields: FIELDS,
    timeoutMs: options.limits.requestBodyTimeoutMs,
    fileField,
  });
}
