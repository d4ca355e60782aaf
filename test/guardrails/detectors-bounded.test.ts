import { describe, expect, it } from 'vitest';
import type { LocalDetector } from '../../src/guardrails/detectors/pattern-detector.js';
import { piiDetector } from '../../src/guardrails/detectors/pii.js';
import { regexDetector } from '../../src/guardrails/detectors/regex.js';
import { secretsDetector } from '../../src/guardrails/detectors/secrets.js';
import { CARD_SAMPLES, SECRET_SAMPLES } from './samples.js';

/**
 * Hostile texts of 1 MiB: runs that start a shape again and again without completing it, the
 * inputs on which a backtracking pattern with an open quantifier goes quadratic. Each detector
 * must read them through (the test finishing at all is the bound: a quadratic scan of 1 MiB
 * takes hours) and still find the one real value put at the end.
 */
const MIB = 1 << 20;
const fill = (unit: string): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);

const NEAR_MISSES = [
  'a',
  'A',
  '-',
  '4',
  '\\n',
  'sk-' + 'a'.repeat(19) + ' ',
  'sk-proj-T3BlbkFJ ',
  'sk-ant-api03-' + 'a'.repeat(20) + ' ',
  'AKIA',
  'ghp_' + 'a'.repeat(35) + ' ',
  'AIza',
  'xoxb-123 ',
  'sk_live_abc ',
  'eyJ',
  'eyJ' + 'a'.repeat(9) + '.',
  'eyJ' + 'a'.repeat(12) + '.eyJ ',
  '-----BEGIN ',
  '-----END RSA PRIVATE KEY-----',
  'a@',
  'a.',
  'a@b.',
  '@a.',
  '+1 ',
  '4 ',
  '4-',
  '(555) ',
  '555-',
  '0.',
  '123-45-678 ',
  'DE',
  'D1',
];

function expectOnlyTheNeedle(detector: LocalDetector, filler: string, needle: string, category: string): void {
  const text = `${filler} , ${needle}`;
  const findings = detector.scan(text);
  expect(findings, `filler ${JSON.stringify(filler.slice(0, 40))}`).toEqual([{ category, start: text.length - needle.length, end: text.length }]);
}

describe('detectors on 1 MiB of hostile text', () => {
  it.each(NEAR_MISSES)('secrets: %j repeated, then a key', (unit) => {
    expectOnlyTheNeedle(secretsDetector({}), fill(unit), SECRET_SAMPLES.github_token!, 'github_token');
  });

  it.each(NEAR_MISSES)('pii: %j repeated, then a card', (unit) => {
    expectOnlyTheNeedle(piiDetector({}), fill(unit), CARD_SAMPLES[0]!, 'card');
  });

  it.each(NEAR_MISSES)('regex: %j repeated, then a ticket id', (unit) => {
    const detector = regexDetector({
      patterns: [
        { category: 'ticket', pattern: '\\bACME-\\d{6}\\b' },
        { category: 'codename', pattern: 'project[ -](?:falcon|eagle)', flags: 'i' },
      ],
    });
    expectOnlyTheNeedle(detector, fill(unit), 'ACME-123456', 'ticket');
  });

  it('masks each of many private key BEGIN lines without reading past the next one', () => {
    const header = '-----BEGIN PRIVATE KEY-----';
    const text = fill(header);
    const findings = secretsDetector({ categories: ['private_key'] }).scan(text);
    expect(findings.length).toBe(Math.floor(MIB / header.length));
    expect(findings.every((finding) => finding.end - finding.start === header.length)).toBe(true);
  });

  it('masks a private key block with no END line up to its bound', () => {
    const detector = secretsDetector({ categories: ['private_key'] });
    const text = '-----BEGIN RSA PRIVATE KEY-----\n' + fill('QUJD');
    const [finding, ...rest] = detector.scan(text);
    expect(rest).toEqual([]);
    expect(finding?.start).toBe(0);
    expect(finding!.end).toBeLessThanOrEqual(2 * 72 + 4000);
    // A stream holds it from its BEGIN line while it grows, not by a hold of its whole length.
    expect(detector.holdFrom(text.slice(0, 600))).toBe(0);
  });
});
