/**
 * How much the fuzz run does, from the environment:
 * - `FUZZ_RUNS`: generated cases in all, split between the generators by weight (default 2 100:
 *   with the corpus, about 15 s alone on two cores, well inside the CI budget of 40 s when other
 *   test files run beside it; `npm run fuzz` runs 20 000);
 * - `FUZZ_SEED`: the random seed (default fixed, so CI replays the same cases and stays
 *   deterministic; a number, or `random` for a new one each run, printed so a failure replays).
 */
const DEFAULT_RUNS = 2_100;
const DEFAULT_SEED = 20_261_122;

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return value;
}

function seed(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === undefined || raw === '') return DEFAULT_SEED;
  if (raw === 'random') return Math.floor(Math.random() * 2 ** 31);
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`FUZZ_SEED must be an integer or "random", got ${JSON.stringify(raw)}`);
  return value;
}

export const budget = {
  runs: positiveInteger('FUZZ_RUNS', DEFAULT_RUNS),
  seed: seed(),
};

/** `total` split by `weights`, rounding up so the parts never sum to less than the total. */
export function share(total: number, weight: number, weights: number): number {
  return Math.ceil((total * weight) / weights);
}
