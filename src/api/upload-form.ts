import { type MultipartBody, type MultipartLimits, readMultipartBody } from '../http/read-multipart.js';
import type { RouteContext } from '../http/route.js';

/** Largest text field of an upload form (the prompt), and the most text fields accepted. */
const FIELD_BYTES = 1024 * 1024;
const FIELDS = 64;

/** What an upload route takes: the field a 413 for too many files names, and its own bounds. */
export interface UploadRoute {
  fileField: string;
  /** Most files the route takes, at most `limits.uploadFiles` (a transcription: 1). */
  files?: number | undefined;
  /** The route's own checks as each file part starts (see `MultipartLimits.onFile`). */
  onFile?: MultipartLimits['onFile'];
}

/**
 * The multipart form of an upload route (image edits, transcriptions), read within the
 * gateway's upload limits and the route's own: a part past them stops the reading at once.
 */
export function readUploadForm({ request, options }: RouteContext, route: UploadRoute): Promise<MultipartBody> {
  const { limits } = options;
  return readMultipartBody(request, {
    fileBytes: limits.uploadFileBytes,
    files: Math.min(route.files ?? limits.uploadFiles, limits.uploadFiles),
    bodyBytes: limits.uploadBodyBytes,
    fieldBytes: FIELD_BYTES,
    fields: FIELDS,
    timeoutMs: limits.requestBodyTimeoutMs,
    fileField: route.fileField,
    onFile: route.onFile,
  });
}
