import { readFile, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The dashboard's static files (index.html, its script and styles), served by the admin handler
 * at `<admin base>/` and `<admin base>/assets/…` without the admin key: they hold no data, the page
 * asks for the key and sends it on every API call. `undefined`: not a dashboard path.
 *
 * `path` is the request's path below the admin base (`''`, `'/'`, `'/assets/app.js'`), as sent
 * (not decoded); `requestUrl` the request's URL, for the redirect from `<base>` to `<base>/`.
 */
export async function dashboardResponse(path: string, requestUrl?: string): Promise<Response | undefined> {
  if (path === '' && requestUrl !== undefined) return redirectToSlash(requestUrl);
  if (path === '' || path === '/' || path === '/index.html') return fileResponse('index.html');
  if (!path.startsWith(ASSETS)) return undefined;
  const name = path.slice(ASSETS.length);
  // One plain file name and nothing else: no `..`, no `/`, no `%`-escapes, no NUL, no absolute path.
  if (!SAFE_NAME.test(name)) return notFound();
  return fileResponse('assets/' + name);
}

const ASSETS = '/assets/';
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9]+)+$/;

/**
 * `<base>` without its slash: the page's relative `assets/…` would resolve outside the base, so the
 * browser goes to `<base>/`. The Location names only the last segment (`./` would be the parent), so
 * it also works behind a proxy that strips a prefix.
 */
function redirectToSlash(requestUrl: string): Response {
  const url = new URL(requestUrl);
  const segment = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
  return new Response(null, { status: 308, headers: { location: `./${segment}/${url.search}`, ...SECURITY_HEADERS } });
}

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

/**
 * The page runs only its own script and styles: nothing inline, nothing from another origin, no
 * frames (clickjacking), API calls to this origin only.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

async function fileResponse(relative: string): Promise<Response> {
  const type = CONTENT_TYPES[relative.slice(relative.lastIndexOf('.') + 1)];
  const root = await dashboardRoot();
  if (type === undefined || root === undefined) return notFound(root === undefined ? NOT_BUILT : undefined);
  let body: Buffer;
  try {
    body = await readFile(root + relative);
  } catch {
    return notFound();
  }
  // The files keep their names from one build to the next: the browser asks again each time
  // (they are small, and a stale script against a newer API would be worse).
  return new Response(new Uint8Array(body), { status: 200, headers: { 'content-type': type, 'cache-control': 'no-cache', ...SECURITY_HEADERS } });
}

const NOT_BUILT = 'The dashboard is not built: `npm run build` makes dist/dashboard.';

function notFound(message = 'No such dashboard file.'): Response {
  return Response.json(
    { error: { message, type: 'invalid_request_error', param: null, code: 'not_found' } },
    { status: 404, headers: { 'cache-control': 'no-cache', ...SECURITY_HEADERS } },
  );
}

/**
 * Where the built page is: `dist/dashboard/` next to this module's bundle (`dist/*.js`), or, when
 * this module runs from `src/admin/` (vitest, tsx), the repository's `dist/dashboard/`. Looked up
 * until found, so a build made after the server started is picked up.
 */
async function dashboardRoot(): Promise<string | undefined> {
  if (foundRoot !== undefined) return foundRoot;
  // A path, not `new URL('…', import.meta.url)`: bundlers take that for an asset to bundle, and
  // Next.js (Turbopack) fails every route of the module on a folder it cannot bundle.
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of ['dashboard', '../../dist/dashboard']) {
    const dir = join(here, candidate) + sep;
    const index = await stat(dir + 'index.html').catch(() => undefined);
    if (index?.isFile()) return (foundRoot = dir);
  }
  return undefined;
}

let foundRoot: string | undefined;
