/** What one server says it serves: the URIs it lists and its URI templates. */
export interface ServedResources {
  uris: string[];
  templates: string[];
}

/**
 * The server a `resources/read` of `uri` goes to, among `servers` (in config order): the first
 * that lists the URI; else the one whose template has the longest literal start (before its first
 * `{`) that the URI begins with; else the only server there is; else none. Templates are compared
 * by their literal start rather than matched as regular expressions: a client's URI against an
 * upstream's template of several `{+path}` expressions could backtrack for seconds.
 */
export async function resourceOwner(uri: string, servers: string[], served: (server: string) => Promise<ServedResources>): Promise<string | undefined> {
  if (servers.length === 0) return undefined;
  const answers = await Promise.allSettled(servers.map(served));
  let best: { server: string; length: number } | undefined;
  for (const [index, answer] of answers.entries()) {
    if (answer.status !== 'fulfilled') continue;
    const server = servers[index]!;
    if (answer.value.uris.includes(uri)) return server;
    for (const template of answer.value.templates) {
      const literal = literalStart(template);
      // A bare scheme (`file://`) or nothing at all says too little to pick a server by.
      if (literal.length <= schemeLength(literal) || !uri.startsWith(literal)) continue;
      if (!best || literal.length > best.length) best = { server, length: literal.length };
    }
  }
  // A server whose resources are not listed (some serve more than they list) is read when it is the only one.
  return best?.server ?? (servers.length === 1 ? servers[0] : undefined);
}

function literalStart(template: string): string {
  const brace = template.indexOf('{');
  return brace < 0 ? template : template.slice(0, brace);
}

function schemeLength(literal: string): number {
  // `file:///` is a bare scheme too: its third slash is any path's root.
  const match = /^[A-Za-z][A-Za-z0-9+.-]*:(?:\/\/\/?)?/.exec(literal);
  return match ? match[0].length : 0;
}
