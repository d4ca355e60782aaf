const MINUTE = 60_000;

/**
 * Requests per minute are counted in windows aligned to the clock's minutes, so a test whose
 * requests straddled a boundary would see its count start again and a refusal it expects never
 * come. Near the end of a minute (on any date, and under `.ci/shifted-clock`), wait for the next
 * one to begin; a test's few requests then fall in one window.
 */
export async function withinOneMinute(): Promise<void> {
  const left = MINUTE - (Date.now() % MINUTE);
  if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
