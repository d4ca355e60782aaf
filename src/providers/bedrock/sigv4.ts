import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';

/** AWS credentials: an access key pair, with the session token of temporary credentials. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
  /** When temporary credentials stop working (a provider refreshes them before). */
  expiration?: Date | undefined;
}

/** Fixed credentials, or the host's provider (e.g. `fromNodeProviderChain()` of `@aws-sdk/credential-providers`), asked on every call. */
export type AwsCredentialSource = AwsCredentials | (() => Promise<AwsCredentials>);

/**
 * Signs Bedrock requests with AWS Signature Version 4 (`@smithy/signature-v4` with the pure-JS
 * SHA-256 of `@aws-crypto`, which runs on Node, Bun and Deno alike). The signature covers the
 * method, the path as sent (the signer encodes each segment once more, as SigV4 wants for every
 * service but S3), `host`, `content-type`, the date and the hash of the exact body bytes.
 */
export class BedrockSigner {
  private readonly signer: SignatureV4;

  constructor(region: string, credentials: AwsCredentialSource) {
    // Its identity type spells optional fields without `| undefined`; the values are the same.
    const identity = credentials as ConstructorParameters<typeof SignatureV4>[0]['credentials'];
    this.signer = new SignatureV4({ service: 'bedrock', region, credentials: identity, sha256: Sha256 });
  }

  /**
   * The headers that authenticate a POST to `url` of the body whose SHA-256 is `bodyHash` (hex,
   * `payload-hash.ts`): `authorization`, `x-amz-date`, `x-amz-content-sha256` (which the signer
   * signs instead of hashing a body itself), and the session token when there is one.
   */
  async headers(url: URL, bodyHash: string): Promise<Record<string, string>> {
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: { host: url.host, 'content-type': 'application/json', 'x-amz-content-sha256': bodyHash },
    });
    const { host: _host, ...headers } = signed.headers;
    return headers;
  }
}

/**
 * Credentials from the config, else the standard environment variables
 * (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`); undefined when neither has them.
 */
export function configuredCredentials(
  options: { accessKeyId?: string | undefined; secretAccessKey?: string | undefined; sessionToken?: string | undefined },
  env: Record<string, string | undefined>,
): AwsCredentials | undefined {
  const fromConfig = options.accessKeyId !== undefined || options.secretAccessKey !== undefined;
  const accessKeyId = fromConfig ? options.accessKeyId : env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = fromConfig ? options.secretAccessKey : env.AWS_SECRET_ACCESS_KEY;
  const sessionToken = fromConfig ? options.sessionToken : env.AWS_SESSION_TOKEN;
  if (!accessKeyId || !secretAccessKey) {
    if (fromConfig) throw new TypeError('bedrock: accessKeyId and secretAccessKey go together');
    return undefined;
  }
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}
