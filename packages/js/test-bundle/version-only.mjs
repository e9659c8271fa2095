// Only version() imported: with tree shaking ("sideEffects": false) the bundle must still load
// the module (no top-level code of the package is needed for it).
import { version } from "shaledb/inline";

console.log(`ok ${version()}`);
