import busboy from 'busboy';
import { GatewayError, isGatewayError } from '../errors.js';
import { withDeadline } from './body-deadline.js';
import { bodyReadFailure, releaseLock } from './read-json.js';
import { YIELD_EVERY_BYTES, yieldToLoop } from './yield-to-loop.js';

export interface MultipartFile {
  /** Form field name as sent (`image`, `image[]`, `mask`). */
  field: string;
  filename: string;
  mimeType: string;
  size: number;
  /** The bytes as they arrived (views of the request's own chunks: the one copy held). */
  chunks: readonly Buffer[];
  /** The bytes in one Buffer, joined on first read (a copy of the whole file, so only if needed). */
  readonly data: Buffer;
}

export interface MultipartBody {
  /** Text fields; a repeated field keeps its last value. */
  fields: Record<string, string>;
  /** Every text field in the order sent, repeats included (`include[]`, `timestamp_granularities[]`). */
  entries: [name: string, value: string][];
  files: MultipartFile[];
}

export interface MultipartLimits {
  fileBytes: number;
  /** Most files: busboy stops at the next file part, and reading stops with it. */
  files: number;
  /** Largest body in all, files and fields: past it, 413 and reading stops. */
  bodyBytes: number;
  fieldBytes: number;
  fields: number;
  /** Deadline for the whole body, from the start of reading: past it, 408. None when omitted. */
  timeoutMs?: number;
  /** The field named by the 413 for too many files (`image` for edits, `file` for transcriptions). */
  fileField: string;
  /**
   * Called as each file part starts, with its field name and the text fields that came before
   * it: a throw (a `GatewayError` naming the field) stops reading there, as the limits do.
   */
  onFile?: ((field: string, fields: Readonly<Record<string, string>>) => void) | undefined;
}

/**
 * Parses a multipart/form-data body with busboy as it arrives, enforcing limits while reading:
 * an oversized file answers 413 and stops reading at once; a malformed body answers 400; a body
 * not complete within `timeoutMs` answers 408 (a client trickling it holds a connection and its
 * buffers). Files are kept (one copy each, in the chunks they came in) because they are sent on
 * to the upstream afterwards.
 */
export async function readMultipartBody(request: Request, limits: MultipartLimits): Promise<MultipartBody> {
  const contentType = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(contentType) || !/boundary=/i.test(contentType)) {
    throw new GatewayError({
      status: 400,
      message: 'Content-Type must be multipart/form-data with a boundary.',
      code: 'invalid_content_type',
    });
  }
  if (!request.body) throw new GatewayError({ status: 400, message: 'A request body is required.', code: 'missing_body' });

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: { fileSize: limits.fileBytes, files: limits.files, fieldSize: limits.fieldBytes, fields: limits.fields },
    });
  } catch (error) {
    throw new GatewayError({ status: 400, message: `Malformed multipart body: ${(error as Error).message}`, code: 'invalid_multipart' });
  }

  const fields: Record<string, string> = {};
  const entries: [string, string][] = [];
  const files: MultipartFile[] = [];
  let failure: GatewayError | undefined;
  const fail = (error: GatewayError) => {
    failure ??= error;
  };

  const finished = new Promise<void>((resolve) => {
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) fail(tooLarge(`The field '${name}' is larger than ${limits.fieldBytes} bytes.`, name));
      fields[name] = value;
      entries.push([name, value]);
    });
    parser.on('file', (name, stream, info) => {
      try {
        limits.onFile?.(name, fields);
      } catch (error) {
        fail(isGatewayError(error) ? error : new GatewayError({ status: 400, message: String(error), param: name, code: 'invalid_value' }));
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(tooLarge(`The file '${info.filename ?? name}' is larger than ${limits.fileBytes} bytes.`, name)));
      // A body cut inside a file errors the file stream too; unhandled, that would crash the process.
      stream.on('error', (error: Error) =>
        fail(new GatewayError({ status: 400, message: `Malformed multipart body: ${error.message}`, code: 'invalid_multipart' })),
      );
      stream.on('end', () => files.push(uploadedFile(name, info.filename ?? 'file', info.mimeType, chunks)));
    });
    parser.on('filesLimit', () => fail(tooLarge(`At most ${limits.files} file${limits.files === 1 ? '' : 's'} may be uploaded.`, limits.fileField)));
    parser.on('fieldsLimit', () => fail(new GatewayError({ status: 400, message: `At most ${limits.fields} fields are accepted.`, code: 'too_many_fields' })));
    parser.on('error', (error: Error) => {
      fail(new GatewayError({ status: 400, message: `Malformed multipart body: ${error.message}`, code: 'invalid_multipart' }));
      resolve();
    });
    parser.on('close', () => resolve());
  });

  const reader = request.body.getReader();
  // Past the deadline the read rejects with the 408, which leaves the loop at once.
  const deadline = withDeadline(reader, limits.timeoutMs);
  let received = 0;
  let yieldAt = YIELD_EVERY_BYTES;
  try {
    for (;;) {
      if (failure) break;
      const { value, done } = await deadline.read().catch((error: unknown) => {
        throw bodyReadFailure(error);
      });
      if (done) break;
      received += value.byteLength;
      if (received > limits.bodyBytes) {
        fail(tooLarge(`The request body is larger than ${limits.bodyBytes} bytes.`, null));
        break;
      }
      // Wait for busboy to drain, or for it to fail (it then never drains).
      if (!parser.write(value)) await Promise.race([new Promise<void>((resolve) => parser.once('drain', resolve)), finished]);
      if (received >= yieldAt) {
        yieldAt = received + YIELD_EVERY_BYTES;
        await yieldToLoop();
      }
    }
    if (failure) {
      await reader.cancel().catch(() => {});
    } else {
      parser.end();
      await finished;
    }
  } finally {
    deadline.clear();
    releaseLock(reader);
  }
  if (failure) throw failure;
  return { fields, entries, files };
}

/** A file whose single Buffer is only built when someone asks for it. */
function uploadedFile(field: string, filename: string, mimeType: string, chunks: Buffer[]): MultipartFile {
  let joined: Buffer | undefined;
  return {
    field,
    filename,
    mimeType,
    size: chunks.reduce((total, chunk) => total + chunk.length, 0),
    chunks,
    get data() {
      joined ??= chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      return joined;
    },
  };
}

function tooLarge(message: string, param: string | null): GatewayError {
  return new GatewayError({ status: 413, message, param, code: 'request_too_large' });
}
