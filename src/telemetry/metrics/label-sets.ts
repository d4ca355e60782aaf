import type { Attributes } from '@opentelemetry/api';

/** One combination of attribute values, made once: its key (for the gateway's own counters) and its attributes. */
export interface LabelSet {
  readonly key: string;
  readonly attributes: Attributes;
}

/** Past this many combinations, the rest share one overflow set, as the OpenTelemetry SDK does at its own limit. */
const MAX_SETS = 2000;
const OVERFLOW: LabelSet = { key: '\u0000overflow', attributes: { 'otel.metric.overflow': true } };

/**
 * Label sets by key, each built once and reused for every record: no attribute object is made
 * per request. Bounded, whatever the upstreams' error codes: past `MAX_SETS` every new
 * combination is the overflow set.
 */
export class LabelSets {
  private readonly sets = new Map<string, LabelSet>();

  of(key: string, attributes: () => Attributes): LabelSet {
    let set = this.sets.get(key);
    if (set) return set;
    if (this.sets.size >= MAX_SETS) return OVERFLOW;
    set = { key, attributes: attributes() };
    this.sets.set(key, set);
    return set;
  }
}
