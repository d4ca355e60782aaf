import { describe, expect, it } from 'vitest';
import { isIban, ibanPrefixLength } from '../../src/guardrails/detectors/iban.js';
import { passesLuhn } from '../../src/guardrails/detectors/luhn.js';
import { PII_CATEGORIES, piiDetector } from '../../src/guardrails/detectors/pii.js';
import { regexDetector } from '../../src/guardrails/detectors/regex.js';
import { SECRET_CATEGORIES, secretsDetector } from '../../src/guardrails/detectors/secrets.js';
import { CARD_SAMPLES, EMAIL_SAMPLES, IBAN_SAMPLES, PHONE_SAMPLES, SECRET_SAMPLE_CATEGORY, SECRET_SAMPLES } from './samples.js';

const secrets = secretsDetector({});
const pii = piiDetector({});

/** The text of each finding, with its category. */
const found = (detector: { scan(text: string): readonly { category: string; start: number; end: number }[] }, text: string) =>
  detector.scan(text).map((finding) => ({ category: finding.category, value: text.slice(finding.start, finding.end) }));

describe('secretsDetector', () => {
  it.each(Object.entries(SECRET_SAMPLES))('finds a %s whole, in prose, in JSON and after a JSON escape', (name, value) => {
    const category = SECRET_SAMPLE_CATEGORY[name]!;
    expect(found(secrets, `my key is ${value}, keep it`)).toEqual([{ category, value }]);
    const json = JSON.stringify({ key: value });
    expect(found(secrets, json)).toEqual([{ category, value: JSON.stringify(value).slice(1, -1) }]);
    expect(found(secrets, `line\\n${value}\\n`).map((finding) => finding.category)).toEqual([category]);
    // A value longer than the hold is held from its opening instead (PEM blocks, JWTs).
    if (value.length > secrets.maxFindingLength) expect(secrets.holdFrom(`text ${value.slice(0, -8)}`)).toBe(5);
  });

  it('leaves look-alikes alone', () => {
    const text = [
      'sk-learn and scikit-learn are libraries',
      'sk-' + 'a'.repeat(48), // sk- without the T3BlbkFJ marker of OpenAI keys
      'AKIA' + 'Q2W3E4R5T6Y7Q2W3' + 'EXTRA', // too long: part of a longer upper-case run
      'xAKIA' + 'Q2W3E4R5T6Y7Q2W3', // glued to a word
      'ghp_short',
      'AIza-too-short',
      'eyJhbGciOi.notajwt',
      '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----',
      'sk_live_short',
      'xoxb-123',
    ].join('\n');
    expect(found(secrets, text)).toEqual([]);
  });

  it('masks a private key block cut short from its BEGIN line over its base64', () => {
    const text = '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAA and then';
    const [finding] = found(secrets, text);
    expect(finding?.category).toBe('private_key');
    expect(finding?.value.startsWith('-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn')).toBe(true);
  });

  it('limits to the categories asked for and refuses an unknown one by name', () => {
    const only = secretsDetector({ categories: ['github_token'] });
    const text = `${SECRET_SAMPLES.github_token} ${SECRET_SAMPLES.aws_access_key_id}`;
    expect(found(only, text).map((finding) => finding.category)).toEqual(['github_token']);
    expect(only.maxFindingLength).toBe(93);
    expect(() => secretsDetector({ categories: ['github_token', 'openai_key'] })).toThrow(
      new TypeError(`secrets guardrail: unknown category "openai_key" (known: ${SECRET_CATEGORIES.join(', ')})`),
    );
  });

  it('is a synchronous, maskable checker: one verdict per text', () => {
    expect(secrets.canMask).toBe(true);
    const verdicts = secrets.check(['nothing here', `key ${SECRET_SAMPLES.stripe_key}`]);
    expect(verdicts).toEqual([{ findings: [] }, { findings: [{ category: 'stripe_key', start: 4, end: 4 + SECRET_SAMPLES.stripe_key!.length }] }]);
  });
});

describe('piiDetector', () => {
  it.each(EMAIL_SAMPLES)('finds the e-mail %s', (email) => {
    expect(found(pii, `write to ${email}.`)).toEqual([{ category: 'email', value: email }]);
  });

  it.each(PHONE_SAMPLES)('finds the phone number %s', (phone) => {
    expect(found(pii, `call ${phone} today`)).toEqual([{ category: 'phone', value: phone }]);
  });

  it.each(CARD_SAMPLES)('finds the card %s', (card) => {
    expect(found(pii, `card: ${card}, exp 12/29`)).toEqual([{ category: 'card', value: card }]);
  });

  it.each(IBAN_SAMPLES)('finds the IBAN %s, not the word after it', (iban) => {
    expect(found(pii, `pay to ${iban} TODAY`)).toEqual([{ category: 'iban', value: iban }]);
  });

  it('finds a US SSN written with dashes', () => {
    expect(found(pii, 'ssn 123-45-6789.')).toEqual([{ category: 'us_ssn', value: '123-45-6789' }]);
  });

  it('leaves plain numbers alone: years, counts, dates, timestamps, versions, ids', () => {
    const text = [
      'In 2024 the model used 1234567 tokens (prompt 123456, completion 98765).',
      'Dates: 2024-01-15, 01.02.2024, 15/01/2024, 12:30:45.',
      'Timestamp 1700000000000 and 1700000000, version 1.2.3, 10.0.0.1, port 8080.',
      'Order #4111111111111112 (fails Luhn), 4111 1111 1111 1112, 0000 0000 0000 0000.',
      'SSN-like 000-12-3456, 666-12-3456, 900-12-3456, 123456789.',
      'IBAN-like DE00 3704 0044 0532 0130 00, XX89 3704 0044 0532 0130 00.',
      'Math: 3+4 = 7, +1000 points, 1-800, a-b@c',
      'user@localhost',
    ].join('\n');
    expect(found(pii, text)).toEqual([]);
  });

  it('limits to the categories asked for and refuses an unknown one by name', () => {
    const only = piiDetector({ categories: ['card'] });
    expect(found(only, `bob@example.com ${CARD_SAMPLES[0]}`).map((finding) => finding.category)).toEqual(['card']);
    expect(() => piiDetector({ categories: ['ssn'] })).toThrow(new TypeError(`pii guardrail: unknown category "ssn" (known: ${PII_CATEGORIES.join(', ')})`));
  });
});

describe('Luhn and IBAN checks', () => {
  it('passes Luhn-valid numbers and fails the others', () => {
    for (const card of CARD_SAMPLES) expect(passesLuhn(card)).toBe(true);
    expect(passesLuhn('79927398713')).toBe(true);
    expect(passesLuhn('79927398710')).toBe(false);
    expect(passesLuhn('4111 1111 1111 1112')).toBe(false);
    expect(passesLuhn('')).toBe(false);
  });

  it('checks an IBAN against its country length and mod 97', () => {
    for (const iban of IBAN_SAMPLES) expect(isIban(iban)).toBe(true);
    expect(isIban('DE89 3704 0044 0532 0130 01')).toBe(false); // check digits wrong
    expect(isIban('DE89 3704 0044 0532 0130 0')).toBe(false); // too short for DE
    expect(isIban('QQ89 3704 0044 0532 0130 00')).toBe(false); // no such country
  });

  it('measures the IBAN at the start of a candidate that runs on', () => {
    expect(ibanPrefixLength('DE89 3704 0044 0532 0130 00 AB')).toBe('DE89 3704 0044 0532 0130 00'.length);
    expect(ibanPrefixLength('DE89370400440532013000AB')).toBe(0); // glued to more characters
  });
});

describe('regexDetector', () => {
  it('compiles each pattern with the g flag (and the flags given) and finds every match', () => {
    const detector = regexDetector({
      patterns: [
        { category: 'ticket', pattern: 'ACME-\\d{4}' },
        { category: 'codename', pattern: 'project (?:falcon|eagle)', flags: 'i' },
      ],
    });
    expect(found(detector, 'ACME-1234 and ACME-5678 for Project FALCON')).toEqual([
      { category: 'ticket', value: 'ACME-1234' },
      { category: 'ticket', value: 'ACME-5678' },
      { category: 'codename', value: 'Project FALCON' },
    ]);
    expect(detector.maxFindingLength).toBe(256);
    expect(regexDetector({ patterns: [{ category: 'x', pattern: 'x' }], maxLength: 40 }).maxFindingLength).toBe(40);
  });

  it('skips empty matches without looping', () => {
    const detector = regexDetector({
      patterns: [
        { category: 'maybe', pattern: 'a*' },
        { category: 'emoji', pattern: '(?:)', flags: 'u' },
      ],
    });
    expect(found(detector, 'baab😀a')).toEqual([
      { category: 'maybe', value: 'aa' },
      { category: 'maybe', value: 'a' },
    ]);
  });

  it('refuses an invalid pattern, naming patterns[i].pattern', () => {
    expect(() =>
      regexDetector({
        patterns: [
          { category: 'ok', pattern: 'x' },
          { category: 'bad', pattern: 'a(' },
        ],
      }),
    ).toThrow(/^regex guardrail: patterns\[1\]\.pattern is not a valid regular expression/);
    expect(() => regexDetector({ patterns: [{ category: 'bad', pattern: 'a', flags: 'ii' }] })).toThrow(/^regex guardrail: patterns\[0\]\.flags/);
  });

  it('refuses a pattern that can backtrack exponentially, naming patterns[i].pattern', () => {
    for (const pattern of ['(a+)+$', '(\\w*)*x', '(?:a|aa)+b+c+(d+)+']) {
      expect(() => regexDetector({ patterns: [{ category: 'bad', pattern }] })).toThrow(
        new TypeError('regex guardrail: patterns[0].pattern can backtrack exponentially (nested quantifiers); rewrite it without them'),
      );
    }
  });
});
