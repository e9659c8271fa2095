/**
 * A test hook of `importDatabase`: the import stops at a given step, tells the page
 * (`importHalted`) and waits there until its worker is terminated — as if the tab had been
 * closed at that moment. Not part of the public API.
 *
 * @module
 */

/**
 * Where the import stops: `"writing"` once half of the archive's files are written aside,
 * `"verified"` once they are all written and verified (just before the switch), `"switched"`
 * right after the switch (before the old files are removed).
 */
export type ImportHalt = "writing" | "verified" | "switched";

export interface ImportDebug {
  halt: ImportHalt;
}

/** Whether `value` is an {@link ImportDebug}. */
export function isImportDebug(value: unknown): value is ImportDebug {
  const halt = (value as { halt?: unknown } | null)?.halt;
  return halt === "writing" || halt === "verified" || halt === "switched";
}
