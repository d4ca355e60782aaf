/**
 * IBAN lengths by country, from the SWIFT IBAN registry (release 99): a candidate of another
 * length, or of a country not listed, is no IBAN.
 */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BI: 27,
  BR: 29,
  BY: 28,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DJ: 27,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FK: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IQ: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LC: 32,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  LY: 25,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MN: 20,
  MR: 27,
  MT: 31,
  MU: 30,
  NI: 28,
  NL: 18,
  NO: 15,
  OM: 23,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  RU: 33,
  SA: 24,
  SC: 31,
  SD: 18,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  SO: 23,
  ST: 25,
  SV: 28,
  TL: 23,
  TN: 24,
  TR: 26,
  UA: 29,
  VA: 22,
  VG: 24,
  XK: 20,
  YE: 30,
};

/**
 * How much of `candidate` (a country code and check digits, then letters and digits, maybe in
 * groups split by single spaces, maybe running on into the next word) is an IBAN: its length, or 0.
 */
export function ibanPrefixLength(candidate: string): number {
  const expected = IBAN_LENGTHS[candidate.slice(0, 2)];
  if (expected === undefined) return 0;
  let characters = 0;
  for (let index = 0; index < candidate.length; index++) {
    if (candidate[index] === ' ') continue;
    if (++characters < expected) continue;
    // The IBAN ends here: what follows must be another word, not more of the same run.
    const end = index + 1;
    return (end === candidate.length || candidate[end] === ' ') && isIban(candidate.slice(0, end)) ? end : 0;
  }
  return 0;
}

/**
 * Whether `candidate` (upper-case letters and digits, spaces allowed) is an IBAN: its country's
 * length and the ISO 7064 mod 97-10 check (the first four characters moved to the end, letters as
 * 10–35, the number mod 97 is 1).
 */
export function isIban(candidate: string): boolean {
  const compact = candidate.replaceAll(' ', '');
  if (IBAN_LENGTHS[compact.slice(0, 2)] !== compact.length) return false;
  const rearranged = compact.slice(4) + compact.slice(0, 4);
  let remainder = 0;
  for (let index = 0; index < rearranged.length; index++) {
    const code = rearranged.charCodeAt(index);
    // Digits add one decimal place, letters (A = 10 … Z = 35) two.
    if (code >= 48 && code <= 57) remainder = (remainder * 10 + code - 48) % 97;
    else if (code >= 65 && code <= 90) remainder = (remainder * 100 + code - 55) % 97;
    else return false;
  }
  return remainder === 1;
}
