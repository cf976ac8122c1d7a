/**
 * Smoke mode: BENCH_SMOKE=1 runs a bench at tiny sizes through the same code paths (the same
 * services, stores, routes and helpers, fewer rows, rounds and seconds), in seconds, and exits 0
 * unless it could not run (an error, a status it did not expect). Its figures are printed but not
 * checked: they mean nothing at those sizes. test/bench-smoke.test.ts runs every `bench:*` script of
 * package.json (and `soak`) this way under `npm test`, so a bench that no longer runs fails CI.
 *
 * A new bench: add its `bench:NAME` script, take each size through `sized(full, smoke)` (or
 * `envSized` where an environment variable may set it), and end through `verdict` (./checks) or
 * `checked(code)`, which let a failed target through in smoke mode. See bench/README.md.
 */
export const SMOKE = process.env.BENCH_SMOKE === "1";

/** `full` normally, `smoke` in smoke mode. */
export const sized = <T>(full: T, smoke: T): T => (SMOKE ? smoke : full);

/** The number in the environment variable `name` if set, else `sized(full, smoke)`. */
export const envSized = (name: string, full: number, smoke: number): number =>
  process.env[name] !== undefined ? Number(process.env[name]) : sized(full, smoke);

/** The exit code of a bench's targets: as is, except in smoke mode, where targets are not checked. */
export function checked(code: number): number {
  if (SMOKE && code !== 0) console.log("(smoke mode: figures not checked)");
  return SMOKE ? 0 : code;
}
