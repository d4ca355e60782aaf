/** The Luhn (mod 10) check digit test of payment card numbers; characters other than digits are skipped. */
export function passesLuhn(number: string): boolean {
  let sum = 0;
  let digits = 0;
  for (let index = number.length - 1; index >= 0; index--) {
    const code = number.charCodeAt(index) - 48;
    if (code < 0 || code > 9) continue;
    // Every second digit from the right is doubled; a two-digit result counts as its digit sum (n - 9).
    const value = digits % 2 === 1 ? (code * 2 > 9 ? code * 2 - 9 : code * 2) : code;
    sum += value;
    digits++;
  }
  return digits > 0 && sum % 10 === 0;
}
