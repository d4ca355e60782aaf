/**
 * A fuzz case: one HTTP request described as plain JSON, so that generated cases and the committed
 * corpus (`corpus/*.json`) share one format, and a generated case that fails can be printed and
 * pasted into the corpus as it is.
 */

/** The routes of `src/api/routes.ts`, plus `unrouted` for paths that match none. */
export type RouteName =
  | 'models'
  | 'model-get'
  | 'responses'
  | 'responses-alias'
  | 'chat'
  | 'messages'
  | 'count-tokens'
  | 'input-tokens'
  | 'compact'
  | 'response-get'
  | 'response-items'
  | 'response-delete'
  | 'images'
  | 'edits'
  | 'video-create'
  | 'video-status'
  | 'video-content'
  | 'speech'
  | 'embeddings'
  | 'transcriptions'
  | 'gemini'
  | 'gemini-stream'
  | 'gemini-embed'
  | 'gemini-count'
  | 'gemini-models'
  | 'gemini-model-get'
  | 'usage'
  | 'mcp'
  | 'mcp-initialize'
  | 'unrouted';

/**
 * A piece of a body: text (sent as UTF-8), a run of one string repeated (deep nesting, long
 * strings, without megabytes of corpus), raw bytes in hex (invalid UTF-8, a BOM), or a fixture file.
 */
export type Piece = string | { repeat: string; times: number } | { hex: string } | { fixture: FixtureName };

export type FixtureName = 'png16' | 'mask16' | 'notPng' | 'wav';

export type BodySpec =
  /** A JSON value, serialized with `JSON.stringify`. */
  | { json: unknown; truncateAt?: number }
  /** Pieces concatenated; `truncateAt` keeps only that many bytes. */
  | { parts: Piece[]; truncateAt?: number }
  | { multipart: MultipartSpec; truncateAt?: number };

export interface MultipartSpec {
  /** Default `fuzzboundary`. The content type names it unless the case overrides `content-type`. */
  boundary?: string;
  parts: MultipartPart[];
  /** Leave off the closing `--boundary--`. */
  unterminated?: boolean;
}

export interface MultipartPart {
  /** Field name; absent → a `Content-Disposition` without `name`. */
  name?: string;
  filename?: string;
  contentType?: string;
  /** A raw `Content-Disposition` value instead of the one built from name and filename; null omits the header. */
  disposition?: string | null;
  value: Piece | Piece[];
}

export interface FuzzCase {
  /** What the case tries, in a few words; unique within its corpus file. */
  name: string;
  route: RouteName;
  /** Default: the route's method. */
  method?: string;
  /**
   * Request target, sent as written; default the route's path. `{completed}`, `{queued}` and
   * `{foreign}` stand for video task ids made at start (finished, never finishing, another key's),
   * `{response}` and `{foreignResponse}` for stored response ids (the caller's, another key's);
   * in header values `{mcpSession}` and `{foreignMcpSession}` for MCP sessions (the caller's, another key's).
   * Here, in header values and in multipart dispositions, `{{20000×g}}` stands for 20 000 `g`s.
   */
  target?: string;
  /**
   * Merged over the route's default headers (host, authorization or x-api-key, content-type,
   * anthropic-version, content-length): a string sets one, an array repeats the header, null
   * removes a default. `{boundary}` in a value stands for the multipart boundary.
   */
  headers?: Record<string, string | string[] | null>;
  /** This many more headers, `x-fuzz-<i>: <i>` (absurd header counts). */
  extraHeaders?: number;
  body?: BodySpec;
  /**
   * Declared `content-length` instead of the real one (null: none). When it is longer than the
   * body the client gives up after sending what it has (half-close), as a cut upload would.
   */
  contentLength?: number | string | null;
  /** Send the body with `transfer-encoding: chunked` (in chunks of this many bytes). */
  chunked?: number;
  /** The body field the case corrupted (`messages[0].role`): a 400 must name it in `param`. */
  field?: string;
  /** Checks beyond the oracle's, for hand-written cases. */
  expect?: {
    status?: number | number[];
    param?: string | null;
    code?: string;
    /** Words the error message must contain: Anthropic's error body has no `param`, its message names the field. */
    message?: string;
  };
  /**
   * The id of a failure already known (`known-issues.ts`, which says where the fix goes): while the
   * case fails that way it is reported loudly at every run instead of failing it; failing any
   * other way still fails the run.
   */
  knownIssue?: string;
  /** Where the case came from, e.g. the generator seed that found it. */
  origin?: string;
}
