import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import { createGateway } from '../../src/gateway.js';
import { MemoryMcpSessionStore } from '../../src/mcp/session-store.js';

/** `mcp` in the config file and in `createGateway`: one set of rules, errors naming the field. */

const base = { keys: [{ key: 'sk-a' }] };

function issuesOf(json: unknown): string[] {
  try {
    parseConfig(json, 'test.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
  throw new Error('expected the config to be rejected');
}

const github = { url: 'https://mcp.github.test/mcp', headers: { 'x-team': 'a' }, bearerToken: 'ghp-secret', timeoutMs: 5000 };
const local = { command: 'node', args: ['server.js'], env: { TOKEN: 'x' }, cwd: '/srv', timeoutMs: 1000 };
const oauth = {
  url: 'https://mcp.jira.test/mcp',
  oauth: { tokenUrl: 'https://auth.test/token', clientId: 'id', clientSecret: 'cs', scope: 'read', audience: 'jira' },
};

describe('config file: mcp', () => {
  it('takes HTTP, OAuth and stdio servers, captureArguments and timeoutMs as given', () => {
    const config = parseConfig({ ...base, mcp: { servers: { github, local, jira: oauth }, captureArguments: true, timeoutMs: 30_000 } });
    expect(config.mcp).toEqual({ servers: { github, local, jira: oauth }, captureArguments: true, timeoutMs: 30_000 });
    expect(config.redisMcpSessionStore).toBeUndefined();
  });

  it('a key’s mcp patterns are kept', () => {
    const config = parseConfig({ keys: [{ key: 'sk-a', mcp: ['github', 'jira__get_*', '*'] }], mcp: { servers: { github } } });
    expect(config.keys[0]!.mcp).toEqual(['github', 'jira__get_*', '*']);
  });

  it('sessionStore: redis is left to the CLI to open, memory is built with its TTL and bound', () => {
    const redis = parseConfig({
      ...base,
      mcp: { servers: { github }, sessionStore: { type: 'redis', url: 'redis://127.0.0.1:6390', ttlSeconds: 600, keyPrefix: 'ig:', maxSessionsPerKey: 5 } },
    });
    expect(redis.redisMcpSessionStore).toEqual({ type: 'redis', url: 'redis://127.0.0.1:6390', ttlSeconds: 600, keyPrefix: 'ig:', maxSessionsPerKey: 5 });
    expect(redis.mcp).toEqual({ servers: { github } });
    const memory = parseConfig({
      ...base,
      mcp: { servers: { github }, sessionStore: { type: 'memory', ttlSeconds: 60, maxSessions: 10, maxSessionsPerKey: 2 } },
    });
    expect(memory.mcp?.sessionStore).toBeInstanceOf(MemoryMcpSessionStore);
  });

  it('names the path of each bad field, never echoing a secret', () => {
    const issues = issuesOf({
      ...base,
      mcp: {
        servers: {
          github: { url: 'mcp.github.test', bearerToken: 42 },
          a__b: { url: 'https://x.test/mcp' },
          a_: { url: 'https://x.test/mcp' },
          _a: { url: 'https://x.test/mcp' },
          local: { command: 'node', args: 'server.js', shell: true },
          neither: { headers: {} },
          ftp: { url: 'ftp://x.test/mcp' },
          both: { url: 'https://x.test/mcp', bearerToken: 't', headers: { Authorization: 'Bearer u' } },
          badHeader: { url: 'https://x.test/mcp', headers: { 'x y': 'v', 'x-z': 'a\r\nb', 'Mcp-Session-Id': 'fixed' } },
          jira: { url: 'https://x.test/mcp', oauth: { tokenUrl: 'https://auth.test/token', clientId: 'id' } },
        },
        timeoutMs: 0,
        sessionStore: { type: 'redis' },
        captureArgs: true,
      },
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        'mcp.servers.github.url: expected an http(s) URL string, got "mcp.github.test"',
        'mcp.servers.github.bearerToken: expected a string',
        'mcp.servers.a__b: expected a server name of letters, digits, "-" and single "_" inside (never "__"), got "a__b"',
        expect.stringMatching(/^mcp\.servers\.a_: expected a server name/),
        expect.stringMatching(/^mcp\.servers\._a: expected a server name/),
        'mcp.servers.local.args: expected an array of strings, got "server.js"',
        'mcp.servers.local.shell: unknown field (allowed: command, args, env, cwd, timeoutMs, maxTotalTimeoutMs)',
        'mcp.servers.neither: expected { "url", … } (Streamable HTTP) or { "command", … } (stdio), got Object',
        'mcp.servers.ftp.url: expected an http(s) URL string, got "ftp://x.test/mcp"',
        'mcp.servers.both: expected one of "bearerToken", "oauth" and an "Authorization" header, not several',
        'mcp.servers.badHeader.headers["x y"]: expected a header name (letters, digits and !#$%&\'*+.^_`|~-)',
        'mcp.servers.badHeader.headers.x-z: expected a header value without line breaks',
        'mcp.servers.badHeader.headers.Mcp-Session-Id: expected a header the MCP transport does not set itself',
        'mcp.servers.jira.oauth.clientSecret: required field is missing',
        'mcp.timeoutMs: expected a number >= 1, got 0',
        expect.stringMatching(/^mcp\.sessionStore: a redis store needs exactly one of "url"/),
        'mcp.captureArgs: unknown field (allowed: servers, captureArguments, timeoutMs, maxTotalTimeoutMs, sessionStore)',
      ]),
    );
    expect(issues.join('\n')).not.toMatch(/Bearer u|a\r\nb/);
  });

  it('refuses mcp without servers, and a key’s mcp patterns that are not names', () => {
    expect(issuesOf({ ...base, mcp: {} })).toEqual(['mcp.servers: required field is missing']);
    expect(issuesOf({ ...base, mcp: { servers: {} } })).toEqual(['mcp.servers: expected at least one server']);
    expect(issuesOf({ keys: [{ key: 'sk-a', mcp: 'github' }] })).toEqual(['keys[0].mcp: expected an array of server or tool name patterns, got "github"']);
    expect(issuesOf({ keys: [{ key: 'sk-a', mcp: ['git hub', 'x'.repeat(201)] }] })).toEqual([
      'keys[0].mcp[0]: expected a server or tool name pattern (letters, digits, "_", "-" and "*"), got "git hub"',
      expect.stringMatching(/^keys\[0\]\.mcp\[1\]: expected at most 200 characters/),
    ]);
    expect(issuesOf({ keys: [{ key: 'sk-a', mcp: Array.from({ length: 257 }, () => 'github') }] })).toEqual([
      expect.stringMatching(/^keys\[0\]\.mcp: expected at most 256 patterns/),
    ]);
  });
});

describe('createGateway({ mcp })', () => {
  const gateway =
    (mcp: unknown, keys: unknown = [{ key: 'sk-a' }]) =>
    () =>
      createGateway({ keys, providers: {}, models: [], mcp } as never);

  it('throws a TypeError naming the field, with the file’s rules', () => {
    expect(gateway({ servers: { github: { url: 'github' } } })).toThrow(new TypeError('options.mcp.servers.github.url: expected an http(s) URL string'));
    expect(gateway({ servers: { a__b: { url: 'https://x.test' } } })).toThrow(/^options\.mcp\.servers\.a__b: expected a server name/);
    expect(gateway({ servers: { x: { command: 'node', env: { A: 1 } } } })).toThrow(new TypeError('options.mcp.servers.x.env.A: expected a string'));
    expect(
      gateway({ servers: { x: { url: 'https://x.test', oauth: { tokenUrl: 'https://a.test', clientId: 'i', clientSecret: 's' }, bearerToken: 't' } } }),
    ).toThrow(/^options\.mcp\.servers\.x: expected one of "bearerToken", "oauth"/);
    expect(gateway({ servers: { x: { url: 'https://x.test' } }, sessionStore: { get() {} } })).toThrow(
      new TypeError('options.mcp.sessionStore must be an McpSessionStore (missing set())'),
    );
    expect(gateway('yes')).toThrow(new TypeError('options.mcp: expected an object'));
    expect(gateway({ servers: { x: { url: 'https://x.test' } } }, [{ key: 'sk-a', mcp: ['a b'] }])).toThrow(
      /^options\.keys\[0\]\.mcp\[0\]: expected a server or tool name pattern/,
    );
  });

  it('accepts a valid mcp with a store of its own', () => {
    expect(gateway({ servers: { github, local }, sessionStore: new MemoryMcpSessionStore(), captureArguments: false })).not.toThrow();
  });
});
