/** How the dashboard writes numbers and times. */

export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  // Single requests cost fractions of a cent: keep enough digits to tell them apart.
  return usd < 1 ? `$${usd.toFixed(6)}` : `$${usd.toFixed(2)}`;
}

export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function formatTime(ms: number | undefined): string {
  return ms === undefined ? '–' : new Date(ms).toLocaleString();
}

export function formatPercent(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`;
}
