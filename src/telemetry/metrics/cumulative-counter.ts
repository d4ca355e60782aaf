import type { Meter, MetricOptions } from '@opentelemetry/api';
import type { LabelSet } from './label-sets.js';

/**
 * A counter kept by the gateway (a number per label set, added to in a few nanoseconds) and
 * reported as an OpenTelemetry asynchronous counter at each collection: a synchronous counter
 * would cost the SDK's attribute hashing on every add, for each request.
 */
export class CumulativeCounter {
  private readonly totals = new Map<string, { set: LabelSet; value: number }>();

  constructor(meter: Meter, name: string, options: MetricOptions) {
    meter.createObservableCounter(name, options).addCallback((result) => {
      for (const { set, value } of this.totals.values()) result.observe(value, set.attributes);
    });
  }

  add(value: number, set: LabelSet): void {
    const total = this.totals.get(set.key);
    if (total) total.value += value;
    else this.totals.set(set.key, { set, value });
  }
}
