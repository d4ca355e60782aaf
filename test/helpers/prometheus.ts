import { expect } from 'vitest';

/** Every sample of a Prometheus text exposition, each line checked against the format. */
export function parsePrometheus(text: string): { name: string; labels: Record<string, string>; value: number }[] {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(match, line).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const [, name, value] of match![2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[name!] = value!;
    samples.push({ name: match![1]!, labels, value: Number(match![3]!.replace('+Inf', 'Infinity')) });
  }
  return samples;
}

/** The sum of a metric's samples whose labels include `labels`. */
export function sample(text: string, name: string, labels: Record<string, string>): number {
  return parsePrometheus(text)
    .filter((line) => line.name === name && Object.entries(labels).every(([label, value]) => line.labels[label] === value))
    .reduce((sum, line) => sum + line.value, 0);
}
