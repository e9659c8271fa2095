/**
 * The database's `LOCK`, released by the main thread for an engine in a worker thread. The core
 * runs the lock-file protocol over the storage's `lockPrimitives`; a process releases the lock
 * files it holds as it exits (`node-lock.ts`), but a worker's exit hooks do not run when the
 * process ends under it. So the two primitives that record and release a held lock,
 * `lockHeld` and `removeIfUnchanged`, run on the main thread: the worker posts the call and
 * waits on a shared word (`Atomics.wait`) until the main thread, idle meanwhile (awaiting the
 * open or close that takes or releases the lock), has answered. The other primitives run in
 * the worker.
 *
 * @module
 */
import type { MessagePort } from "node:worker_threads";

import type { LockPrimitives, StorageHost } from "../engine/storage-host.js";
import { NodeFsStorage } from "./node-storage.js";

/** A lock call the worker relays. */
export interface LockCall {
  type: "lock";
  op: "held" | "remove" | "releaseAll";
  name: string;
  /** The lock file's bytes (a copy). */
  bytes: Uint8Array;
  limit: number;
}

/** The shared answer area: word 0 the state, word 1 the result, then the length and the JSON of an error. */
const PENDING = 0;
const DONE = 1;
const FAILED = 2;
const HEADER = 12;
/** Bytes of the answer area (an error's code and message fit). */
export const LOCK_ANSWER_BYTES = 16 << 10;

/**
 * The worker's side: `host` whose `lockPrimitives.lockHeld` and `removeIfUnchanged`, and the
 * lock part of `releaseAll`, are relayed to the main thread over `port`, answered in `answers`
 * (a `SharedArrayBuffer` of {@link LOCK_ANSWER_BYTES}). Throws what the main thread threw.
 */
export function relayLocks(host: StorageHost, port: MessagePort, answers: SharedArrayBuffer): StorageHost {
  const own = host.lockPrimitives;
  if (own === undefined) {
    return host;
  }
  const words = new Int32Array(answers, 0, 3);
  const text = new Uint8Array(answers, HEADER);
  const call = (op: LockCall["op"], name: string, bytes: Uint8Array, limit: number): number => {
    Atomics.store(words, 0, PENDING);
    port.postMessage({ type: "lock", op, name, bytes: bytes.slice(), limit } satisfies LockCall);
    Atomics.wait(words, 0, PENDING);
    if (Atomics.load(words, 0) === FAILED) {
      const { code, message } = JSON.parse(new TextDecoder().decode(text.slice(0, words[2]))) as {
        code: string;
        message: string;
      };
      throw Object.assign(new Error(message), { code });
    }
    return words[1] ?? 0;
  };
  const relayed: LockPrimitives = {
    hardLink: (existing, name) => own.hardLink(existing, name),
    readSmall: (name, max) => own.readSmall(name, max),
    removeIfUnchanged: (name, bytes, limit) => call("remove", name, bytes, limit) === 1,
    lockHeld: (name, bytes) => {
      call("held", name, bytes, 0);
    },
    processId: () => own.processId(),
    processStat: (pid) => own.processStat(pid),
    path: (name) => own.path(name),
    // The worker's own thread: a lock of a worker stopped under it is stale (node-lock.ts).
    threadId: () => own.threadId?.(),
    threadAlive: (pid, thread) => own.threadAlive?.(pid, thread) ?? true,
  };
  return new Proxy(host, {
    get(target, property) {
      switch (property) {
        case "lockPrimitives":
          return relayed;
        case "releaseAll":
          return () => {
            target.releaseAll();
            call("releaseAll", "", new Uint8Array(0), 0);
          };
        default: {
          // Read on the target itself: its getters use private fields.
          const value: unknown = Reflect.get(target, property);
          return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        }
      }
    },
  });
}

/** The main thread's side: records and releases the lock files of directory `location`. */
export class LockHolder {
  readonly #location: string;
  readonly #answers: SharedArrayBuffer;
  #storage: NodeFsStorage | undefined;

  constructor(location: string, answers: SharedArrayBuffer) {
    this.#location = location;
    this.#answers = answers;
  }

  /** Carries out `call` and answers the waiting worker. */
  answer(call: LockCall): void {
    const words = new Int32Array(this.#answers, 0, 3);
    try {
      // The worker has opened the directory (it exists), so this creates nothing.
      this.#storage ??= new NodeFsStorage(this.#location, { create: false });
      const primitives = this.#storage.lockPrimitives;
      let result = 0;
      if (call.op === "held") {
        primitives.lockHeld(call.name, call.bytes);
      } else if (call.op === "remove") {
        result = primitives.removeIfUnchanged(call.name, call.bytes, call.limit) ? 1 : 0;
      } else {
        this.release();
      }
      words[1] = result;
      Atomics.store(words, 0, DONE);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const text = new TextEncoder().encode(
        JSON.stringify({
          code: typeof code === "string" ? code : "EIO",
          message: error instanceof Error ? error.message : String(error),
        }),
      );
      const room = this.#answers.byteLength - HEADER;
      new Uint8Array(this.#answers, HEADER).set(text.subarray(0, room));
      words[2] = Math.min(text.length, room);
      Atomics.store(words, 0, FAILED);
    }
    Atomics.notify(words, 0);
  }

  /** Releases every lock file recorded (the worker is gone, or has released them). Idempotent. */
  release(): void {
    this.#storage?.lockPrimitives.releaseAll();
    this.#storage = undefined;
  }
}
