// A bundle with the WebAssembly module inside it (`shaledb/inline`): one file, nothing beside it.
import { open, openSync, version } from "shaledb/inline";

import { exercise } from "./exercise.mjs";

exercise({ open, openSync, version }, process.argv[2]).then(console.log, (error) => {
  console.error(error);
  process.exitCode = 1;
});
