// What the scale-out runner and its gateway processes agree on: the keys, the model and its price.

/** Throughput: a limit and a budget out of reach (every request still admitted and settled on Redis). */
export const LOAD_KEY = { key: 'sk-bench-load', id: 'load' };
/** A small requests-per-minute limit, hit by a burst. */
export const LIMIT_KEY = { key: 'sk-bench-limit', id: 'limit' };
/** A small lifetime dollar budget, hit by a burst. */
export const BUDGET_KEY = { key: 'sk-bench-budget', id: 'budget' };

export const MODEL = 'bench-chat';
/** Two deployments, `flaky` (bench/flaky-upstream.mjs) and `steady` (the mock): the reroute check. */
export const REROUTE_MODEL = 'bench-reroute';
/** Failures in a row that open a deployment's breaker (`policies.retry.failuresBeforeCooldown`). */
export const FAILURES_TO_OPEN = 3;
/** Dollars per million tokens. */
export const MODEL_PRICE = { input: 2, output: 8 };
/**
 * One answer's cost in billionths of a dollar (the engine's unit): the mock's usage is 20 input
 * and 10 output tokens (lib/wire.mjs), 20 × 2 + 10 × 8 = 120 millionths of a dollar.
 */
export const REQUEST_NANO_USD = (20 * MODEL_PRICE.input + 10 * MODEL_PRICE.output) * 1000;
