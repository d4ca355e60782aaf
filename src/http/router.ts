import type { Route } from './route.js';

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allow: string[]; style: Route['style']; styleFor?: Route['styleFor'] | undefined }
  | { kind: 'not-found' };

/**
 * Matches a path against a fixed table. Static paths are a map lookup; the few parameterized
 * ones are compared segment by segment.
 */
export class Router {
  private readonly staticRoutes = new Map<string, Route[]>();
  private readonly paramRoutes: { segments: string[]; route: Route }[] = [];

  constructor(routes: readonly Route[]) {
    for (const route of routes) {
      if (route.path.includes('/:')) {
        this.paramRoutes.push({ segments: route.path.split('/'), route });
      } else {
        const list = this.staticRoutes.get(route.path) ?? [];
        list.push(route);
        this.staticRoutes.set(route.path, list);
      }
    }
  }

  match(method: string, path: string): RouteMatch {
    const candidates: { route: Route; params: Record<string, string> }[] = [];
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
      allow: candidates.map((candidate) => candidate.route.method),
      style: candidates[0]!.route.style,
      styleFor: candidates[0]!.route.styleFor,
    };
  }
}

function matchSegments(pattern: string[], segments: string[]): Record<string, string> | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    const actual = segments[i]!;
    if (expected.startsWith(':')) {
      if (actual === '') return undefined;
      try {
        params[expected.slice(1)] = decodeURIComponent(actual);
      } catch {
        return undefined;
      }
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}
