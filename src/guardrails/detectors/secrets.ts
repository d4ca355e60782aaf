import { MANAGED_KEY_PREFIX } from '../../admin/keys/key-secret.js';
import type { GuardrailSpecOf } from '../guardrail-schema.js';
import { type DetectorRule, type LocalDetector, ruleDetector, rulesOf, startingWith } from './pattern-detector.js';

/*
 * Credential shapes with a fixed prefix or a checked structure, so prose and code rarely match.
 * Adapted from gitleaks' rules (github.com/gitleaks/gitleaks, config/gitleaks.toml and
 * cmd/generate/config/rules/*.go: openai-api-key, anthropic-api-key, aws-access-token,
 * github-pat, github-fine-grained-pat, gcp-api-key, slack-*-token, stripe-access-token, jwt,
 * private-key), with every quantifier bounded: gitleaks runs RE2, which is linear whatever the
 * pattern, and V8 backtracks, so an open `{17,}` followed by a literal is quadratic on a long run.
 * The bounds also make `maxFindingLength` finite (a stream holds back that many characters).
 * Left edges are lookbehinds (`startingWith`) rather than `\b`, so a key right after a JSON `\n`
 * escape is found, and a key glued to a word is not.
 */

/** What `categories` of a `secrets` guardrail may name. */
export const SECRET_CATEGORIES = [
  'openai_api_key',
  'anthropic_api_key',
  'infergate_api_key',
  'aws_access_key_id',
  'github_token',
  'google_api_key',
  'slack_token',
  'stripe_key',
  'jwt',
  'private_key',
] as const;

export type SecretCategory = (typeof SECRET_CATEGORIES)[number];

/** Longest private key block masked: a 4096-bit RSA key in PEM is ~3.3 KB, also with its newlines JSON-escaped. */
const PRIVATE_KEY_BODY = 4000;

const rule = (category: SecretCategory, source: string, maxLength: number, opening?: string): DetectorRule => ({
  category,
  pattern: new RegExp(source, 'g'),
  maxLength,
  ...(opening ? { opening: new RegExp(`${opening}$`) } : {}),
});
/** `head` not glued to a word, a key or a name before it. */
const word = (head: string): string => startingWith(String.raw`\w-`, head);

export const SECRET_RULES: readonly DetectorRule[] = [
  // `sk-…T3BlbkFJ…` ("OpenAI" in base64) is in every OpenAI key, legacy (sk-) and project/service/admin (sk-proj-, …).
  rule('openai_api_key', word('sk-') + String.raw`(?:(?:proj|svcacct|admin)-)?[\w-]{20,100}T3BlbkFJ[\w-]{20,100}`, 219),
  // sk-ant-api03-…, sk-ant-admin01-…, OAuth sk-ant-oat01-/sk-ant-ort01-.
  rule('anthropic_api_key', String.raw`sk-ant-[a-z]{2,8}\d{2}-[\w-]{32,160}`, 180),
  // The gateway's own managed keys (src/admin/keys/key-secret.ts): the prefix and 32 bytes in base64url.
  rule('infergate_api_key', String.raw`${MANAGED_KEY_PREFIX}[\w-]{43}`, MANAGED_KEY_PREFIX.length + 43),
  // Access key ids (AKIA long-term, ASIA STS, ABIA, ACCA): 20 upper-case characters standing alone.
  rule('aws_access_key_id', startingWith('A-Za-z0-9', 'AKIA|ASIA|ABIA|ACCA') + '[A-Z0-9]{16}(?![A-Za-z0-9])', 20),
  // Classic tokens (ghp_ personal, gho_ OAuth, ghu_/ghs_ app, ghr_ refresh) and fine-grained PATs.
  rule('github_token', String.raw`gh[oprsu]_[A-Za-z0-9]{36}|github_pat_\w{82}`, 93),
  rule('google_api_key', word('AIza') + String.raw`[\w-]{35}(?![\w-])`, 39),
  // Bot, user, workspace, refresh and config tokens (xoxb-, xoxp-, xoxa-, xoxr-, xoxs-, xoxe-…) and app tokens (xapp-).
  rule('slack_token', word('xox[abeoprs]|xapp') + String.raw`(?:\.[A-Za-z0-9]{1,8})?-[A-Za-z0-9-]{10,250}`, 264),
  // Secret and restricted keys, live and test (test keys still act on the account's test data).
  rule('stripe_key', word('sk_|rk_') + '(?:live|test)_[A-Za-z0-9]{10,247}', 255),
  // Three base64url parts, header and payload JSON objects (`eyJ` is `{"`); the signature may be absent (alg none).
  rule(
    'jwt',
    word('eyJ') + String.raw`[\w-]{10,600}\.eyJ[\w-]{10,2400}\.[\w-]{0,1000}`,
    4015,
    word('eyJ') + String.raw`[\w-]{10,600}(?:\.(?:eyJ[\w-]{0,2400}(?:\.[\w-]{0,1000})?)?)?`,
  ),
  // A PEM block (PKCS#1, PKCS#8, EC, OpenSSH, PGP…) to its END line; a block cut short (no END within
  // reach) is masked from its BEGIN line over the base64 that follows. The body stops at `-----`, so
  // each character is read by one block only.
  rule(
    'private_key',
    '-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----' +
      `(?:(?:[^-]|-(?!----)){1,${PRIVATE_KEY_BODY}}-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----` +
      String.raw`|[A-Za-z0-9+/=\s\\]{0,${PRIVATE_KEY_BODY}})`,
    // BEGIN and END lines are at most 11 + 39 + 22 characters each.
    2 * 72 + PRIVATE_KEY_BODY,
    '-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----' +
      `(?:[^-]|-(?!----)){0,${PRIVATE_KEY_BODY}}(?:-----END[ A-Z0-9]{0,60}-{0,4}|-{1,5}(?:EN?)?)?`,
  ),
];

/** A `secrets` guardrail's detector: the credential shapes above, or those of `spec.categories`. */
export function secretsDetector(spec: Pick<GuardrailSpecOf<'secrets'>, 'categories'>): LocalDetector {
  return ruleDetector(rulesOf('secrets', SECRET_RULES, SECRET_CATEGORIES, spec.categories));
}
