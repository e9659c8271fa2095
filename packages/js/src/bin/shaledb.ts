#!/usr/bin/env node
/**
 * `npx shaledb`: the package's `bin`, a launcher of the command-line tool (the Rust binary of
 * `crates/cli`, the same one `cargo install` gives). The binary comes in a package per platform,
 * `@shaledb/cli-<platform>-<arch>` (`os`/`cpu` fields), which this package lists as optional
 * dependencies: npm installs the one that fits the machine and skips the others, the way esbuild,
 * Biome and SWC ship theirs.
 *
 * Contract: runs the binary with this process's arguments and its standard streams; exits with
 * the binary's exit code, or dies of the same signal (SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to
 * the launcher alone are passed on to the binary first). When no binary is installed for this
 * platform it prints how to get the tool and exits with 2 (the tool's code for an error) without
 * running anything.
 *
 * `SHALEDB_CLI_TEST_PLATFORM` (e.g. `darwin-arm64`) stands for `process.platform-process.arch`:
 * for the tests of the message only.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";

const SCOPE = "@shaledb/cli-";
const FORWARDED_SIGNALS: readonly NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];

/** The platforms with a binary package: this package's optional dependencies named `@shaledb/cli-*`. */
function supportedPlatforms(): string[] {
  const manifest: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  const optional =
    typeof manifest === "object" && manifest !== null && "optionalDependencies" in manifest
      ? manifest.optionalDependencies
      : undefined;
  return Object.keys(typeof optional === "object" && optional !== null ? optional : {})
    .filter((name) => name.startsWith(SCOPE))
    .map((name) => name.slice(SCOPE.length));
}

/** Where the binary for a platform is: found, its package not installed, or a package without it. */
type Lookup = { found: true; path: string } | { found: false; path: string | undefined };

/**
 * The binary of `platform` (`linux-x64`): `path` is undefined when its package is not installed;
 * a package without the binary is the package's template in the repository's workspace.
 */
function findBinary(platform: string): Lookup {
  const require = createRequire(import.meta.url);
  const executable = platform.startsWith("win32-") ? "shaledb.exe" : "shaledb";
  let path: string;
  try {
    path = join(dirname(require.resolve(`${SCOPE}${platform}/package.json`)), "bin", executable);
  } catch {
    return { found: false, path: undefined };
  }
  return { found: existsSync(path), path };
}

/** What to tell a user with no binary for `platform` (`path`: where its package would hold it). */
function notInstalledMessage(platform: string, path: string | undefined, supported: readonly string[]): string {
  let why: string;
  if (path !== undefined) {
    why =
      `Its package ${SCOPE}${platform} holds no ${path} (the repository's template? ` +
      "packages/js/scripts/cli-package.mjs makes the package with the binary).";
  } else if (supported.includes(platform)) {
    why =
      `Its package ${SCOPE}${platform}, an optional dependency of shaledb, is not installed (npm leaves it ` +
      "out with --omit=optional, or when it cannot fetch it): reinstall shaledb with optional dependencies, " +
      `or install ${SCOPE}${platform} beside it.`;
  } else {
    why = `Prebuilt binaries exist for: ${supported.length > 0 ? supported.join(", ") : "no platform in this build"}.`;
  }
  return [
    `shaledb: the command-line tool has no binary installed for this platform (${platform}).`,
    why,
    "Or build the tool from a checkout of ShaleDB's repository with Rust: cargo install --path crates/cli",
    "(the same tool; `shaledb help` lists its commands).",
  ].join("\n");
}

function main(): void {
  const platform = process.env["SHALEDB_CLI_TEST_PLATFORM"] || `${process.platform}-${process.arch}`;
  const lookup = findBinary(platform);
  if (!lookup.found) {
    process.stderr.write(`${notInstalledMessage(platform, lookup.path, supportedPlatforms())}\n`);
    process.exitCode = 2;
    return;
  }
  const binary = lookup.path;
  const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  for (const signal of FORWARDED_SIGNALS) {
    process.on(signal, forward);
  }
  child.on("error", (error) => {
    process.stderr.write(`shaledb: cannot run ${binary}: ${error.message}\n`);
    process.exitCode = 2;
  });
  child.on("exit", (code, signal) => {
    for (const forwarded of FORWARDED_SIGNALS) {
      process.off(forwarded, forward);
    }
    if (signal !== null) {
      // Dies of the same signal, as a shell reports a binary run directly (128 + its number);
      // the exit code says the same where Node ignores the signal (SIGPIPE).
      process.exitCode = 128 + constants.signals[signal];
      process.kill(process.pid, signal);
      return;
    }
    process.exitCode = code ?? 2;
  });
}

main();
