import { expect, it } from 'vitest';
import { LabelSets } from '../../src/telemetry/metrics/label-sets.js';

it('builds each label set once, and past 2,000 of them gives the overflow set', () => {
  const labels = new LabelSets();
  let built = 0;
  const make = (value: string) => () => {
    built++;
    return { 'error.type': value };
  };
  const first = labels.of('a', make('a'));
  expect(labels.of('a', make('a'))).toBe(first);
  expect(built).toBe(1);
  for (let i = 1; i < 2000; i++) labels.of(`code-${i}`, make(`code-${i}`));
  expect(labels.of('one-too-many', make('one-too-many')).attributes).toEqual({ 'otel.metric.overflow': true });
  expect(labels.of('a', make('a'))).toBe(first);
});
