// What the CLI's JS check scripts share: named checks printed TAP-like (`ok - name` /
// `not ok - name` with the error), a JSON equality assertion, the CLI run as a user would and
// its JSON lines, and the closing `<label>: N passed, N failed` line with the exit code.
import { execFileSync } from "node:child_process";

/** A run of checks labelled `label` (the summary line's prefix). */
export function checks(label) {
  let passed = 0;
  let failed = 0;
  return {
    /** Runs check `name` (sync or async); a throw fails it, and the others still run. */
    async check(name, fn) {
      try {
        await fn();
        passed++;
        console.log(`ok - ${name}`);
      } catch (e) {
        failed++;
        console.log(`not ok - ${name}\n  ${String(e?.stack ?? e).replaceAll("\n", "\n  ")}`);
      }
    },
    /** Prints the summary and exits: 0 if every check passed. */
    finish() {
      console.log(`${label}: ${passed} passed, ${failed} failed`);
      process.exit(failed === 0 ? 0 : 1);
    },
  };
}

/** Throws unless `actual` and `expected` have the same JSON; `what` names the value. */
export function equal(actual, expected, what) {
  const [a, b] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== b) throw new Error(`${what}: expected ${b}, got ${a}`);
}

/** A function running the CLI binary `bin` with its arguments; returns its standard output. */
export const cli = (bin) => (...args) => execFileSync(bin, args, { encoding: "utf8" });

/** The JSON lines of `text`. */
export const lines = (text) => text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
