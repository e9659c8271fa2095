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
import { writeUtf8 } from "../encoding/utf8-into.js";
import { currentGeneration, wasm } from "./instance.js";

/** Up to this many bytes are copied by a loop; more by `TypedArray#set`. */
const LOOP_COPY_MAX = 64;

/**
 * Binary values up to this size are copied into a shared slab (as Node's `Buffer` pool does),
 * larger ones into a buffer of their own: a fresh `ArrayBuffer` per small value costs more than
 * the rest of a get (an allocation outside the JS heap, then its sweeping).
 */
const SLAB_VALUE_MAX = 1024;
const SLAB_SIZE = 8192;

let memory: WebAssembly.Memory | undefined;
let view = new Uint8Array(0);
let address = 0;
let capacity = 0;
let generation = -1;
/** The slab small binary values are copied into, and how much of it is used. */
let slab = new Uint8Array(0);
let slabUsed = 0;

/** Records the memory of a freshly instantiated module. */
export function setMemory(m: WebAssembly.Memory): void {
  memory = m;
  view = new Uint8Array(m.buffer);
  generation = -1;
}

/** The instance's memory size in bytes (0 before the first instance). */
export function memorySize(): number {
  return memory === undefined ? 0 : memory.buffer.byteLength;
}

/** Forgets the memory of an instance let go of (so that it can be freed). */
export function forgetMemory(): void {
  memory = undefined;
  view = new Uint8Array(0);
  slab = new Uint8Array(0);
  slabUsed = 0;
  generation = -1;
}

/**
 * A view of the whole memory. When the memory grows, its old buffer is detached (its length
 * becomes 0): only then is the view renewed, after the instance reserved room ahead so that it
 * grows again only after an eighth more (`crates/wasm/src/memory_growth.rs`: in Node 20, each
 * growth past about 32 MiB cost a minor GC).
 */
export function memoryBytes(): Uint8Array {
  if (view.byteLength === 0 && memory !== undefined) {
    wasm.memoryReserveAhead();
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

/** Makes the scratch buffer hold at least `need` bytes. Call inside `call()`. */
export function reserveScratch(need: number): void {
  if (generation !== currentGeneration() || need > capacity) {
    capacity = Math.max(need, 1024);
    address = wasm.scratchReserve(capacity);
    generation = currentGeneration();
  }
}

/**
 * Writes `data` (bytes, or text its codec checked: `packedForm`) at `offset` in the scratch
 * buffer, which must have room ({@link reserveScratch} of `maxWrittenBytes`); returns the bytes
 * written. Text goes straight into the instance's memory: no `TextEncoder` array, no copy.
 */
export function writeScratchAt(offset: number, data: Uint8Array | string): number {
  const mem = memoryBytes();
  if (typeof data === "string") {
    return writeUtf8(mem, address + offset, data);
  }
  copyInto(mem, data, address + offset);
  return data.length;
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

/**
 * A copy of `length` bytes of `mem` from `start` that the caller owns. Small ones are views of
 * a shared slab: their bytes are theirs alone, their `buffer` is not (as with iterator entries
 * and Node's pooled `Buffer`s).
 */
function copyValue(mem: Uint8Array, start: number, length: number): Uint8Array {
  if (length > SLAB_VALUE_MAX) {
    return mem.slice(start, start + length);
  }
  if (slabUsed + length > slab.length) {
    slab = new Uint8Array(SLAB_SIZE);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + length);
  out.set(mem.subarray(start, start + length));
  // Eight-byte aligned, so a caller's DataView or Float64Array over a value stays aligned.
  slabUsed += (length + 7) & ~7;
  return out;
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
  const length = outputLength();
  const mem = memoryBytes();
  return codec.decode(
    codec.transient ? mem.subarray(valueAddress, valueAddress + length) : copyValue(mem, valueAddress, length),
  );
}
