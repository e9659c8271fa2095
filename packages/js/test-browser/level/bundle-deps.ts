// Bundles test-browser/level/deps-entry.js (abstract-level and level-read-stream, CommonJS) into
// dist/test-level-deps.js, the one ES module the Level test page's import map points both names at.
import { build } from "rolldown";

import { PACKAGE_ROOT } from "../fixtures/static-server.js";

export const DEPS_PATH = "/dist/test-level-deps.js";

export async function bundleLevelDeps(): Promise<void> {
  await build({
    cwd: PACKAGE_ROOT,
    input: "test-browser/level/deps-entry.js",
    platform: "browser",
    logLevel: "warn",
    output: { file: `.${DEPS_PATH}`, format: "esm" },
  });
}
