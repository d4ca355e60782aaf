import safeRegex from 'safe-regex2';

/**
 * Whether a configured pattern compiles and cannot backtrack exponentially (safe-regex2: no
 * nested quantifiers), so a client's text cannot stall the event loop through it.
 */
export function isSafePattern(pattern: string, flags = ''): boolean {
  try {
    new RegExp(pattern, flags);
  } catch {
    return false;
  }
  return safeRegex(pattern);
}
