/**
 * The database's `LOCK`, held by the main thread for an engine in a worker thread. A process
 * releases its locks as it exits (`node-lock.ts`), but a worker's exit hooks do not run when the
 * process ends under it; so the worker's storage takes and releases locks through the main
 * thread, synchronously: it posts the call and waits on a shared word (`Atomics.wait`) until the
 * main thread, idle meanwhile (awaiting the open or close that needs the lock), has answered.
 *
 * @module
 */
import type { MessagePort } from "node:worker_threads";

import type { StorageHost } from "../engine/storage-host.js";
import { NodeFsStorage } from "./node-storage.js";

/** A lock call the worker relays. */
export interface LockCall {
  type: "lock";
  op: "lock" | "unlock" | "releaseAll";
  name: string;
  id: number;
}

/** The shared answer area: word 0 the state, word 1 the id, then the length and the JSON of an error. */
const PENDING = 0;
const DONE = 1;
const FAILED = 2;
const HEADER = 12;
/** Bytes of the answer area (an error's code and message fit). */
export const LOCK_ANSWER_BYTES = 16 << 10;

/**
 * The worker's side: `host` with `lock`, `unlock` and `releaseAll`'s unlocking relayed to the
 * main thread over `port`, answered in `answers` (a `SharedArrayBuffer` of
 * {@link LOCK_ANSWER_BYTES}). Throws what the main thread's `lock` threw (`LOCKED`, ...).
 */
export function relayLocks(host: StorageHost, port: MessagePort, answers: SharedArrayBuffer): StorageHost {
  const words = new Int32Array(answers, 0, 3);
  const bytes = new Uint8Array(answers, HEADER);
  const call = (op: LockCall["op"], name: string, id: number): number => {
    Atomics.store(words, 0, PENDING);
    port.postMessage({ type: "lock", op, name, id } satisfies LockCall);
    Atomics.wait(words, 0, PENDING);
    if (Atomics.load(words, 0) === FAILED) {
      const { code, message } = JSON.parse(new TextDecoder().decode(bytes.slice(0, words[2]))) as {
        code: string;
        message: string;
      };
      throw Object.assign(new Error(message), { code });
    }
    return words[1] ?? 0;
  };
  return new Proxy(host, {
    get(target, property) {
      switch (property) {
        case "lock":
          return (name: string) => call("lock", name, 0);
        case "unlock":
          return (id: number) => {
            call("unlock", "", id);
          };
        case "releaseAll":
          return () => {
            target.releaseAll();
            call("releaseAll", "", 0);
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

/** The main thread's side: holds the locks of the database in directory `location`. */
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
      let id = 0;
      if (call.op === "lock") {
        // The worker has opened the directory (it exists), so this creates nothing.
        this.#storage ??= new NodeFsStorage(this.#location, { create: false });
        id = this.#storage.lock(call.name);
      } else if (call.op === "unlock") {
        this.#storage?.unlock(call.id);
      } else {
        this.release();
      }
      words[1] = id;
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

  /** Releases every lock held (the worker is gone, or has released them). Idempotent. */
  release(): void {
    this.#storage?.releaseAll();
    this.#storage = undefined;
  }
}
