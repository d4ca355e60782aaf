import { GatewayError, type GatewayErrorInit } from '../errors.js';
import type { RefusalReason } from './events.js';

/** A refusal by the key's limits, quota, balance or budget: a `GatewayError` that says which one. */
export class AdmissionRefusal extends GatewayError {
  constructor(
    readonly reason: RefusalReason,
    init: GatewayErrorInit,
  ) {
    super(init);
  }
}
