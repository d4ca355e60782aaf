import type { Route } from './route.js';

/** What the router reads of a route: its method, its path pattern, and the error shape of a 405 (the admin API routes its own kind). */
export type RoutePattern = Pick<Route, 'path' | 'style' | 'styleFor' | 'webSocketFallback'> & { method: string };

export type RouteMatch<R extends RoutePattern = Route> =
  | { kind: 'found'; route: R; params: Record<string, string> }
  | {
      kind: 'method-not-allowed';
      allow: string[];
      style: Route['style'];
      styleFor?: Route['styleFor'] | undefined;
      /** A route of the path answers a WebSocket handshake with 426 (`Route.webSocketFallback`). */
      webSocketFallback: boolean;
    }
  | { kind: 'not-found' };

/**
 * One segment of a route's path: a literal, or a parameter with an optional literal suffix.
 * `:model` takes a whole segment; `:model:generateContent` takes what comes before the suffix
 * (Google puts the method inside the last segment: `models/gemini-2.5-flash:generateContent`).
 * A parameter name is a word, so the suffix starts at the first non-word character. `:model+`,
 * last in a path, takes one or more segments, slashes kept (`models/openai/gpt-4o:generateContent`).
 */
type SegmentPattern = { literal: string } | { param: string; suffix: string; rest: boolean };

const PARAM = /^:(\w+)(\+?)(.*)$/;

/**
 * Matches a path against a fixed table. Static paths are a map lookup; the few parameterized
 * ones are compared segment by segment.
 */
export class Router<R extends RoutePattern = Route> {
  private readonly staticRoutes = new Map<string, R[]>();
  private readonly paramRoutes: { segments: SegmentPattern[]; route: R }[] = [];

  constructor(routes: readonly R[]) {
    for (const route of routes) {
      if (route.path.includes('/:')) {
        this.paramRoutes.push({ segments: parsePattern(route.path), route });
      } else {
        const list = this.staticRoutes.get(route.path) ?? [];
        list.push(route);
        this.staticRoutes.set(route.path, list);
      }
    }
  }

  match(method: string, path: string): RouteMatch<R> {
    const candidates: { route: R; params: Record<string, string> }[] = [];
    for (const route of this.staticRoutes.get(path) ?? []) candidates.push({ route, params: {} });
    if (candidates.length === 0) {
      const segments = path.split('/');
      for (const { segments: pattern, route } of this.paramRoutes) {
        const params = matchSegments(pattern, segments);
        if (params) candidates.push({ route, params });
      }
    }
    if (candidates.length === 0) return { kind: 'not-found' };
    // HEAD is answered like GET by the transport; treat it as GET here.
    const wanted = method === 'HEAD' ? 'GET' : method;
    const found = candidates.find((candidate) => candidate.route.method === wanted);
    if (found) return { kind: 'found', route: found.route, params: found.params };
    return {
      kind: 'method-not-allowed',
      allow: [...new Set(candidates.map((candidate) => candidate.route.method))],
      style: candidates[0]!.route.style,
      styleFor: candidates[0]!.route.styleFor,
      webSocketFallback: candidates.some((candidate) => candidate.route.webSocketFallback === true),
    };
  }
}

/** A route's path split into segment patterns; a badly written route line fails at start. */
function parsePattern(path: string): SegmentPattern[] {
  const parts = path.split('/');
  return parts.map((part, i) => {
    const match = PARAM.exec(part);
    if (!match) return { literal: part };
    const [, param, plus, suffix] = match as unknown as [string, string, string, string];
    if (plus && i !== parts.length - 1) throw new TypeError(`Route ${path}: a '+' parameter must be the last segment`);
    return { param, suffix, rest: plus === '+' };
  });
}

function matchSegments(pattern: SegmentPattern[], segments: string[]): Record<string, string> | undefined {
  const last = pattern[pattern.length - 1];
  const rest = last !== undefined && 'param' in last && last.rest;
  if (rest ? segments.length < pattern.length : segments.length !== pattern.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    // The rest parameter takes every segment left, joined back with their slashes.
    const actual = rest && i === pattern.length - 1 ? segments.slice(i).join('/') : segments[i]!;
    if ('literal' in expected) {
      if (expected.literal !== actual) return undefined;
      continue;
    }
    if (!actual.endsWith(expected.suffix)) return undefined;
    const raw = actual.slice(0, actual.length - expected.suffix.length);
    if (raw === '' || (rest && raw.split('/').includes(''))) return undefined;
    try {
      params[expected.param] = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
  }
  return params;
}
