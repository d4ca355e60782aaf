import { GatewayError } from './errors.js';

/**
 * A bound on a walk over a client's JSON that can do more work than the JSON is long. Inlining
 * `$ref`s is the case in point: a definition that uses another from 3 properties, which uses the
 * next from 3 more, is 3^depth nodes once inlined, from a few hundred bytes of request (a cycle
 * is cut on the path, but a chain of distinct definitions is not a cycle). Walks that visit each
 * node of the body once are bounded by the body's own limits instead (`read-json.ts`).
 *
 * The walk spends one node for each schema object it visits, plus the keys it copies, and the
 * characters of the text it writes out (names, descriptions, values a shared definition repeats).
 * Past either limit it stops with a 400 naming the field it was in, in the client's words.
 * One budget serves a whole request, shared by all its schemas: a thousand small tools do not
 * each get a budget of their own.
 */
export interface WorkLimits {
  /** Schema objects visited and keys copied. */
  nodes: number;
  /** Characters of text written out. */
  chars: number;
}

/**
 * What one request's schemas may cost (all tools and the response format together): far above
 * real schemas (a large MCP tool set with its `$defs` inlined is a few thousand nodes), and a
 * few milliseconds of work (see `docs/endpoints.md`, "Limits").
 */
export const SCHEMA_WORK: WorkLimits = { nodes: 50_000, chars: 4 * 1024 * 1024 };

/** The `code` of the 400 a spent budget answers. */
export const TOO_COMPLEX = 'schema_too_complex';

export class WorkBudget {
  /** Spent so far (the fuzz tests read these). */
  nodes = 0;
  chars = 0;

  /** `refuse` makes what is thrown past a limit: by default the 400 of a schema too large to expand. */
  constructor(
    readonly limits: WorkLimits = SCHEMA_WORK,
    private readonly refuse: (param: string, limits: WorkLimits) => Error = schemaTooComplex,
  ) {}

  /** Spends `nodes` and `chars` for work on the client's field `param`; throws past a limit. */
  spend(param: string, nodes: number, chars = 0): void {
    this.nodes += nodes;
    this.chars += chars;
    if (this.nodes > this.limits.nodes || this.chars > this.limits.chars) throw this.refuse(param, this.limits);
  }
}

/** The characters `value` takes as JSON (a string's length, for the common case, without serializing it). */
export function jsonChars(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  return JSON.stringify(value)?.length ?? 0;
}

function schemaTooComplex(param: string, limits: WorkLimits): GatewayError {
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: TOO_COMPLEX,
    param,
    message: `The JSON schema in '${param}' is too large once its $refs are expanded: the gateway expands at most ${limits.nodes} nodes and ${limits.chars} characters of schema per request. Use fewer or smaller shared definitions.`,
  });
}

/** The nodes one step of a walk touches in `node`: itself, its keys, and the entries of the arrays and objects it holds. */
export function shallowNodes(node: Record<string, unknown>): number {
  let nodes = 1;
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) nodes += 1 + value.length;
    else if (typeof value === 'object' && value !== null) nodes += 1 + Object.keys(value).length;
    else nodes += 1;
  }
  return nodes;
}
