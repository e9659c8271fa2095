/**
 * The JavaScript side of the scratch buffer (`crates/wasm/src/scratch.rs`): keys and values of
 * get, put and delete are written straight into WebAssembly memory, and a value read is decoded
 * from there (copied out once only when its codec keeps the bytes, as `"binary"` does), with no
 * allocation inside the instance per call.
 *
 * The hot paths avoid what costs more than the work itself for small keys and values: reading
 * `WebAssembly.Memory#buffer` (a call into the engine) on every call, and `TypedArray#set` (a
 * runtime call) for a few bytes.
 *
 * @module
 */
import type { Codec } from "../encoding/codec.js";
import { currentGeneration, wasm } from "./instance.js";

/** Up to this many bytes are copied by a loop; more by `TypedArray#set`. */
const LOOP_COPY_MAX = 64;

let memory: WebAssembly.Memory | undefined;
let view = new Uint8Array(0);
let address = 0;
let capacity = 0;
let generation = -1;

/** Records the memory of a freshly instantiated module. */
export function setMemory(m: WebAssembly.Memory): void {
  memory = m;
  view = new Uint8Array(m.buffer);
  generation = -1;
}

/**
 * A view of the whole memory. When the memory grows, its old buffer is detached (its length
 * becomes 0): only then is the view renewed.
 */
export function memoryBytes(): Uint8Array {
  if (view.byteLength === 0 && memory !== undefined) {
    view = new Uint8Array(memory.buffer);
  }
  return view;
}

/** Copies `src` into `mem` at `at`. */
export function copyInto(mem: Uint8Array, src: Uint8Array, at: number): void {
  const n = src.length;
  if (n > LOOP_COPY_MAX) {
    mem.set(src, at);
    return;
  }
  for (let i = 0; i < n; i++) {
    mem[at + i] = src[i] as number;
  }
}

/** Writes `a` (and `b` right after it) into the scratch buffer. Call inside `call()`. */
export function writeScratch(a: Uint8Array, b?: Uint8Array): void {
  const need = a.length + (b === undefined ? 0 : b.length);
  if (generation !== currentGeneration() || need > capacity) {
    capacity = Math.max(need, 1024);
    address = wasm.scratchReserve(capacity);
    generation = currentGeneration();
  }
  const mem = memoryBytes();
  copyInto(mem, a, address);
  if (b !== undefined) {
    copyInto(mem, b, address + a.length);
  }
}

/**
 * The length a call that returns output by address left in the scratch buffer's first 4 bytes.
 * A call may come first in a fresh instance (an iterator's batch before any get): then the
 * buffer's address is asked for now, with no growth (the instance starts it at 1,024 bytes), so
 * what the call left there stays.
 */
function outputLength(): number {
  if (generation !== currentGeneration()) {
    capacity = 1024;
    address = wasm.scratchReserve(capacity);
    generation = currentGeneration();
  }
  const mem = memoryBytes();
  return (
    ((mem[address] as number) |
      ((mem[address + 1] as number) << 8) |
      ((mem[address + 2] as number) << 16) |
      ((mem[address + 3] as number) << 24)) >>>
    0
  );
}

/** Copies out the output (a value, an iterator's batch) a call returned at `valueAddress` (not 0). */
export function readOutput(valueAddress: number): Uint8Array {
  const length = outputLength();
  return memoryBytes().slice(valueAddress, valueAddress + length);
}

/**
 * Decodes with `codec` the value a `...Scratch` read returned at `valueAddress` (not 0): from
 * WebAssembly memory itself when the codec keeps no reference to it, else from a copy.
 */
export function decodeOutput(valueAddress: number, codec: Codec<unknown>): unknown {
  const end = valueAddress + outputLength();
  const mem = memoryBytes();
  return codec.decode(codec.transient ? mem.subarray(valueAddress, end) : mem.slice(valueAddress, end));
}
