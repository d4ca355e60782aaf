import type { GatewayError } from '../errors.js';

/**
 * How a family of clients talks to the gateway apart from its request bodies: where it puts its
 * key, the error body its SDK parses, and headers it expects on every answer. Each route has one
 * (`protocols/openai/style.ts`, `protocols/messages/style.ts`).
 */
export interface ClientStyle {
  readonly name: string;
  /** The caller's key as these clients send it, or undefined when there is none. */
  apiKey(request: Request): string | undefined;
  /** Says how to send the key, when none came. */
  readonly missingKeyMessage: string;
  /**
   * The error body these clients' SDKs parse; the status and headers come from the error.
   * `requestId` is the answer's, which Anthropic's body repeats.
   */
  errorBody(error: GatewayError, requestId: string): unknown;
  /** Headers an error answer carries besides its own (MCP's 401 challenge: `mcp/mcp-style.ts`). */
  errorHeaders?(error: GatewayError): Record<string, string>;
  /** Headers these clients read on every answer, errors included. */
  responseHeaders?(requestId: string): Record<string, string>;
}

/** The key of `Authorization: Bearer <key>`. */
export function bearerToken(request: Request): string | undefined {
  const header = request.headers.get('authorization');
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}
