import { randomBytes } from 'node:crypto';
import type { BodyPiece } from './upstream-body.js';

export interface MultipartPart {
  name: string;
  /** A text field, or a file with its name and type; a file's bytes may come in chunks. */
  value: string | { data: Uint8Array | readonly Uint8Array[]; filename: string; contentType: string };
}

/**
 * Encodes parts as a `multipart/form-data` body (RFC 7578) in pieces: the part headers as text
 * and the files' bytes as they are. The files were read and checked against the limits already;
 * joining them into one buffer would copy a 50 MB upload once more and block the event loop for
 * tens of milliseconds while doing it. `UpstreamClient.post` sends the pieces with their length.
 */
export function multipartBody(parts: readonly MultipartPart[]): { body: BodyPiece[]; contentType: string } {
  const boundary = `----infergate${randomBytes(12).toString('hex')}`;
  const body: BodyPiece[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"`;
    if (typeof part.value === 'string') {
      body.push(`${head}\r\n\r\n${part.value}\r\n`);
    } else {
      head += `; filename="${quote(part.value.filename)}"\r\nContent-Type: ${part.value.contentType}\r\n\r\n`;
      body.push(head);
      const data = part.value.data;
      if (data instanceof Uint8Array) body.push(data);
      else for (const chunk of data) body.push(chunk);
      body.push('\r\n');
    }
  }
  body.push(`--${boundary}--\r\n`);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Quotes a name for a Content-Disposition parameter (as browsers do: `"` and line breaks escaped). */
function quote(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
