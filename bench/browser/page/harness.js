// Workload data of the browser suite: the generators of bench/common/generators.mjs (which the
// Node suite and the native program share), so every engine gets the same operations on the
// same bytes as in the Node suite.
export { KEY_SIZE, Rng, SCAN_LEN, SEED, SIZES, makeKeys, makeValues, permutation } from "../../common/generators.mjs";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
