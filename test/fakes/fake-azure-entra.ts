import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake token endpoint received. */
export interface TokenRequest {
  tenant: string;
  form: Record<string, string>;
  contentType: string;
}

export interface FakeEntra {
  /** The authority host, as `entra.authorityHost` takes it. */
  url: string;
  tenantId: string;
  clientId: string;
  clientSecret: string;
  requests: TokenRequest[];
  /** Tokens issued, oldest first. */
  issued: string[];
  /** Whether Azure accepts `token`: issued here and not revoked. */
  accepts(token: string): boolean;
  /** Azure stops accepting `token` (revoked, or the clock of the resource moved on). */
  revoke(token: string): void;
  close(): Promise<void>;
}

export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

/**
 * Microsoft Entra ID's v2.0 token endpoint (`POST /{tenant}/oauth2/v2.0/token`) for the
 * client-credentials grant, from Microsoft's identity platform reference: a form body with
 * `grant_type=client_credentials`, `client_id`, `client_secret` and a `.default` scope; the
 * answer `{token_type: "Bearer", expires_in, ext_expires_in, access_token}`; errors as OAuth's
 * `{error, error_description, error_codes, …}` with AADSTS codes.
 */
export async function startFakeEntra(): Promise<FakeEntra> {
  const tenantId = '72f988bf-86f1-41af-91ab-2d7cd011db47';
  const clientId = 'c0ffee00-1111-2222-3333-444455556666';
  const clientSecret = 'fake~client~secret~value';
  const requests: TokenRequest[] = [];
  const issued: string[] = [];
  const revoked = new Set<string>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const fail = (status: number, error: string, description: string, code: number) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(
          JSON.stringify({
            error,
            error_description: `AADSTS${code}: ${description}\r\nTrace ID: 0000aaaa-11bb-cccc-dd22-eeeeee333333\r\nTimestamp: 2026-11-23 16:00:00Z`,
            error_codes: [code],
            timestamp: '2026-11-23 16:00:00Z',
            trace_id: '0000aaaa-11bb-cccc-dd22-eeeeee333333',
            correlation_id: '1111bbbb-22cc-dddd-ee33-ffffff444444',
          }),
        );
      };
      const match = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !match) {
        res.writeHead(404).end();
        return;
      }
      const contentType = req.headers['content-type'] ?? '';
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      requests.push({ tenant: decodeURIComponent(match[1]!), form, contentType });
      if (!contentType.startsWith('application/x-www-form-urlencoded')) {
        return fail(400, 'invalid_request', "The request body must contain the following parameter: 'grant_type'.", 900144);
      }
      if (decodeURIComponent(match[1]!) !== tenantId) {
        return fail(400, 'invalid_request', `Tenant '${match[1]}' not found. Check to make sure you have the correct tenant ID.`, 90002);
      }
      if (form.grant_type !== 'client_credentials') {
        return fail(400, 'unsupported_grant_type', "The provided value for the input parameter 'grant_type' is not valid.", 70003);
      }
      if (form.client_id !== clientId) {
        return fail(400, 'unauthorized_client', `Application with identifier '${form.client_id}' was not found in the directory.`, 700016);
      }
      if (form.client_secret !== clientSecret) {
        return fail(401, 'invalid_client', `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value.`, 7000215);
      }
      if (form.scope !== COGNITIVE_SERVICES_SCOPE) {
        return fail(400, 'invalid_scope', `The provided value for the input parameter 'scope' is not valid. The scope ${form.scope} is not valid.`, 70011);
      }
      const token = `eyJ0eXAiOiJKV1QiFake.${issued.length + 1}.${Date.now().toString(36)}`;
      issued.push(token);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store, no-cache' });
      res.end(JSON.stringify({ token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    tenantId,
    clientId,
    clientSecret,
    requests,
    issued,
    accepts: (token) => issued.includes(token) && !revoked.has(token),
    revoke: (token) => void revoked.add(token),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
