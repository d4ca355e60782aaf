/**
 * Host-facing option types accept `undefined` for an optional field (`field?: T | undefined`), so
 * a host compiled with `exactOptionalPropertyTypes` can pass `{ baseURL: process.env.X }`. An
 * undefined field means "not set" everywhere, which these two helpers keep true.
 */

/** `T` with every field set: `Required<T>` that also drops the `| undefined` the fields allow. */
export type Defaulted<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

/** The object without its undefined-valued fields, before it is spread over defaults or handed to an API that would see them. */
export function withoutUndefined<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
