import { describe, expect, it } from 'vitest';
import { clientToolName, mayBeShortened, routeName } from '../../src/mcp/tool-names.js';

describe('MCP tool names', () => {
  it('splits after the configured server, keeping `__` in the tool name', () => {
    expect(routeName('files__read__all', { files: {} })).toEqual({ server: 'files', name: 'read__all' });
    expect(routeName('unknown__tool', { files: {} })).toBeUndefined();
    expect(routeName('files', { files: {} })).toBeUndefined();
  });

  it('prefers the longest configured server the name starts with', () => {
    expect(routeName('a___x', { a: {}, a_: {} })).toEqual({ server: 'a_', name: 'x' });
  });

  it('keeps names up to 64 characters; longer ones are cut with a hash of the whole, distinct and stable', () => {
    expect(clientToolName('s', 'tool')).toBe('s__tool');
    const long = 'x'.repeat(70);
    const one = clientToolName('s', long);
    expect(one).toHaveLength(64);
    expect(one).toBe(clientToolName('s', long));
    expect(one).not.toBe(clientToolName('s', `${long}y`));
    expect(mayBeShortened(one)).toBe(true);
    expect(mayBeShortened('s__tool')).toBe(false);
    expect(routeName(one, { s: {} })?.server).toBe('s');
  });

  it('a server name too long to keep in a shortened name leaves the name whole', () => {
    const server = 's'.repeat(60);
    expect(clientToolName(server, 'tool')).toBe(`${server}__tool`);
  });
});
