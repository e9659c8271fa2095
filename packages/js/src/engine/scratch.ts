/**
 * The JavaScript side of the scratch buffer (`crates/wasm/src/scratch.rs`): keys and values of
 * get, put and delete are written straight into WebAssembly memory, and a value read is copied
 * out once, with no allocation inside the instance per call.
 *
 * @module
 */
import { currentGeneration, wasm } from "./instance.js";

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

/** A view of the whole memory (renewed when the memory has grown). */
function bytes(): Uint8Array {
  if (memory !== undefined && view.buffer !== memory.buffer) {
    view = new Uint8Array(memory.buffer);
  }
  return view;
}

/** Writes `a` (and `b` right after it) into the scratch buffer. Call inside `call()`. */
export function writeScratch(a: Uint8Array, b?: Uint8Array): void {
  const need = a.length + (b?.length ?? 0);
  if (generation !== currentGeneration() || need > capacity) {
    address = wasm.scratchReserve(Math.max(need, 1024));
    capacity = Math.max(need, 1024);
    generation = currentGeneration();
  }
  const mem = bytes();
  mem.set(a, address);
  if (b !== undefined) {
    mem.set(b, address + a.length);
  }
}

/** Copies out the value a `...Scratch` read returned at `valueAddress` (not 0). */
export function readOutput(valueAddress: number): Uint8Array {
  const mem = bytes();
  const length =
    ((mem[address] as number) |
      ((mem[address + 1] as number) << 8) |
      ((mem[address + 2] as number) << 16) |
      ((mem[address + 3] as number) << 24)) >>>
    0;
  return mem.slice(valueAddress, valueAddress + length);
}
