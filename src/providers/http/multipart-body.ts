import { randomBytes } from 'node:crypto';

export interface MultipartPart {
  name: string;
  /** A text field, or a file with its name and type. */
  value: string | { data: Uint8Array; filename: string; contentType: string };
}

/**
 * Encodes parts as a `multipart/form-data` body (RFC 7578) in one buffer: the files were read
 * and checked against the limits already, so nothing is gained by streaming them again.
 */
export function multipartBody(parts: readonly MultipartPart[]): { body: Buffer; contentType: string } {
  const boundary = `----infergate${randomBytes(12).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"`;
    if (typeof part.value === 'string') {
      chunks.push(Buffer.from(`${head}\r\n\r\n`, 'utf8'), Buffer.from(part.value, 'utf8'), Buffer.from('\r\n'));
    } else {
      head += `; filename="${quote(part.value.filename)}"\r\nContent-Type: ${part.value.contentType}\r\n\r\n`;
      chunks.push(Buffer.from(head, 'utf8'), Buffer.from(part.value.data.buffer, part.value.data.byteOffset, part.value.data.byteLength), Buffer.from('\r\n'));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Quotes a name for a Content-Disposition parameter (as browsers do: `"` and line breaks escaped). */
function quote(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
