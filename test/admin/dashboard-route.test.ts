import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createAdminHandler } from '../../src/admin/admin-handler.js';
import { dashboardResponse } from '../../src/admin/dashboard-route.js';
import { MemoryKeyStore } from '../../src/admin/keys/memory-key-store.js';
import { serve } from '../helpers/serve.js';

// dist/dashboard comes from test/global-setup.ts (the second tsup config).

describe('dashboardResponse', () => {
  it('serves index.html at the base with a strict policy, no sniffing and revalidation', async () => {
    const response = (await dashboardResponse('/'))!;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    const page = await response.text();
    expect(page).toContain('<script type="module" src="assets/app.js"></script>');
    expect(page).toContain('<link rel="stylesheet" href="assets/app.css" />');
    // Nothing inline for the policy to block, nothing from the network.
    expect(page).not.toMatch(/<script>|<style|\sstyle=|https?:\/\//);
  });

  it('sends the base without its slash to the base with it (relative, so a prefix-stripping proxy keeps working)', async () => {
    const response = (await dashboardResponse('', 'http://127.0.0.1:8080/ops/admin?x=1'))!;
    expect(response.status).toBe(308);
    expect(response.headers.get('location')).toBe('./admin/?x=1');
    expect(new URL(response.headers.get('location')!, 'http://127.0.0.1:8080/ops/admin?x=1').pathname).toBe('/ops/admin/');
    // Without the URL: the page itself.
    expect((await dashboardResponse(''))!.status).toBe(200);
  });

  it('serves the bundled script and the CSS (uPlot’s included) with their types', async () => {
    const script = (await dashboardResponse('/assets/app.js'))!;
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(script.headers.get('x-content-type-options')).toBe('nosniff');
    const code = await script.text();
    // Preact, htm and uPlot are inside: no bare import left for the browser to resolve.
    expect(code).not.toMatch(/\bfrom\s*["'](preact|htm|uplot)/);
    const styles = (await dashboardResponse('/assets/app.css'))!;
    expect(styles.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const css = await styles.text();
    expect(css).toContain('.uplot');
    expect(css).not.toMatch(/@import|@font-face|url\(\s*["']?https?:/);
  });

  it.each([
    ['a parent segment', '/assets/../package.json'],
    ['a parent segment at the end', '/assets/..'],
    ['an encoded parent segment', '/assets/%2e%2e/package.json'],
    ['an encoded slash', '/assets/..%2f..%2fpackage.json'],
    ['an absolute path', '/assets//etc/passwd'],
    ['a nested path', '/assets/sub/app.js'],
    ['a NUL', '/assets/app.js\0.png'],
    ['an encoded NUL', '/assets/app.js%00'],
    ['a backslash', '/assets/..\\package.json'],
    ['a dot file', '/assets/.env'],
    ['an unknown file', '/assets/missing.js'],
    ['an unknown type', '/assets/app.exe'],
  ])('answers 404 to %s', async (_name, path) => {
    const response = (await dashboardResponse(path))!;
    expect(response.status).toBe(404);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('leaves other admin paths to the API', async () => {
    expect(await dashboardResponse('/keys')).toBeUndefined();
    expect(await dashboardResponse('/status')).toBeUndefined();
    expect(await dashboardResponse('/assets')).toBeUndefined();
  });

  it('serves the file the build made, byte for byte', async () => {
    const built = await readFile(new URL('../../dist/dashboard/assets/app.js', import.meta.url));
    const served = Buffer.from(await (await dashboardResponse('/assets/app.js'))!.arrayBuffer());
    expect(served.equals(built)).toBe(true);
  });
});

describe('the dashboard through the admin handler', () => {
  /** A GET with the target sent as written (Node's client does not normalise it, a browser would). */
  function rawGet(url: string, target: string): Promise<{ status: number; type: string | undefined; body: string }> {
    return new Promise((resolve, reject) => {
      const sent = request(url + target, { method: 'GET' }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, type: response.headers['content-type'], body }));
      });
      sent.path = target;
      sent.on('error', reject).end();
    });
  }

  it('serves the page without the admin key and never a file outside dist/dashboard', async () => {
    const handler = createAdminHandler({ key: 'admin-key-0123456789abcdef', keys: new MemoryKeyStore(), logger: false });
    const served = await serve(handler);
    try {
      const page = await rawGet(served.url, '/admin/');
      expect(page.status).toBe(200);
      expect(page.body).toContain('assets/app.js');
      expect((await rawGet(served.url, '/admin/assets/app.css')).type).toBe('text/css; charset=utf-8');
      for (const target of [
        '/admin/assets/../../package.json',
        '/admin/assets/..%2f..%2fpackage.json',
        '/admin/assets/%2e%2e/%2e%2e/package.json',
        '/admin/assets/%00',
      ]) {
        const answer = await rawGet(served.url, target);
        expect(answer.body, target).not.toContain('"devDependencies"');
        expect(answer.status, target).not.toBe(200);
      }
    } finally {
      await served.close();
    }
  });
});
