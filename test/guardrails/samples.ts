/**
 * Made-up values of each shape the detectors know, built at run time from repeated characters so
 * no file in the repository looks like a live credential to a secret scanner.
 */
const run = (characters: string, length: number): string => characters.repeat(Math.ceil(length / characters.length)).slice(0, length);

export const SECRET_SAMPLES: Readonly<Record<string, string>> = {
  openai_api_key: 'sk-proj-' + run('Ab3_xY9-', 74) + 'T3Blbk' + 'FJ' + run('Qw8Er7Ty', 74),
  openai_legacy: 'sk-' + run('Zx9Cv8Bn', 20) + 'T3Blbk' + 'FJ' + run('Mn7Lk6Jh', 20),
  anthropic_api_key: 'sk-ant-' + 'api03-' + run('Ab9_Cd8-Ef7', 93) + 'AA',
  infergate_api_key: 'sk-' + 'ig-' + run('Kq2_Wz7-', 43),
  aws_access_key_id: 'AKIA' + run('Q2W3E4R5T6Y7', 16),
  aws_sts_key_id: 'ASIA' + run('ZXCV2345', 16),
  github_token: 'ghp' + '_' + run('aB3dE6gH9', 36),
  github_fine_grained: 'github' + '_pat_' + run('11AbC_dE9', 82),
  google_api_key: 'AI' + 'za' + run('Sy9_x-Q2w', 35),
  slack_token: 'xox' + 'b-' + '1234567890123-1234567890123-' + run('aBcD1234', 24),
  stripe_key: 'sk_' + 'live_' + run('4eC39HqLy', 24),
  jwt: 'eyJ' + run('hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9', 33) + '.eyJ' + run('zdWIiOiIxMjM0NTY3ODkwIn0', 40) + '.' + run('SflKxwRJSMeKKF2QT4fwpM_', 43),
  private_key:
    '-----BEGIN ' +
    'RSA PRIVATE KEY-----\n' +
    Array.from({ length: 12 }, () => run('MIIEpAIBAAKCAQEA75+/=', 64)).join('\n') +
    '\n-----END RSA PRIVATE KEY-----',
};

/** The category each sample is found as. */
export const SECRET_SAMPLE_CATEGORY: Readonly<Record<string, string>> = {
  openai_api_key: 'openai_api_key',
  openai_legacy: 'openai_api_key',
  anthropic_api_key: 'anthropic_api_key',
  infergate_api_key: 'infergate_api_key',
  aws_access_key_id: 'aws_access_key_id',
  aws_sts_key_id: 'aws_access_key_id',
  github_token: 'github_token',
  github_fine_grained: 'github_token',
  google_api_key: 'google_api_key',
  slack_token: 'slack_token',
  stripe_key: 'stripe_key',
  jwt: 'jwt',
  private_key: 'private_key',
};

/** Luhn-valid test card numbers the card networks publish for testing. */
export const CARD_SAMPLES = ['4111 1111 1111 1111', '5555-5555-5555-4444', '378282246310005', '6011111111111117', '4242424242424242'];

export const EMAIL_SAMPLES = ['bob.smith@example.co.uk', 'a_b+tag@mail.example.org', 'x@test.io'];

export const PHONE_SAMPLES = ['+44 20 7946 0958', '+1 (555) 123-4567', '+33612345678', '(555) 123-4567', '555-123-4567', '020 7946 0958', '06 12 34 56 78'];

/** IBANs from the registry's examples (valid check digits). */
export const IBAN_SAMPLES = ['DE89 3704 0044 0532 0130 00', 'GB82WEST12345698765432', 'FR14 2004 1010 0505 0001 3M02 606', 'NL91ABNA0417164300'];
