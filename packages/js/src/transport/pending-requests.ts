/**
 * The client's side of requests, for every transport: numbering them, holding their promises
 * until their replies come, and batching — requests made in one turn of the event loop travel in
 * one message (the transport sends them from a microtask after the last).
 *
 * @module
 */
import type { ShaleError } from "../errors.js";
import type { Op, Reply, RequestMessage } from "./requests.js";
import { fromWire } from "./wire-error.js";

/** One request made and not answered yet. */
export interface Pending {
  readonly op: Op;
  readonly args: unknown[];
  /** The server that must serve it (it uses that server's iterator, snapshot or transaction). */
  readonly bound: string | undefined;
  /** The server it was sent to; `undefined` while unsent. */
  sentTo: string | undefined;
  /** Whether the caller wants `[result, server]` rather than the result alone. */
  readonly withServer: boolean;
  /** Whether it was sent to a server that went away without answering it. */
  resent: boolean;
  resolve(value: unknown): void;
  reject(error: ShaleError): void;
}

export class PendingRequests {
  /** In the order of their ids (a Map keeps the order of insertion). */
  readonly #pending = new Map<number, Pending>();
  /** Ids of pending requests not sent yet. */
  #unsent: number[] = [];
  #nextId = 1;
  #sendQueued = false;
  readonly #send: () => void;
  readonly #onError: (error: ShaleError) => void;
  #drained: (() => void) | undefined;

  /**
   * `send`: called from a microtask once requests were added; it sends {@link take}'s requests
   * if it can (else later, when it can). `onError`: sees every error a reply carries.
   */
  constructor(send: () => void, onError: (error: ShaleError) => void = () => undefined) {
    this.#send = send;
    this.#onError = onError;
  }

  /** Requests not answered yet. */
  get size(): number {
    return this.#pending.size;
  }

  /** Every request numbered below this one has its answer. */
  get settledBelow(): number {
    return this.#pending.keys().next().value ?? this.#nextId;
  }

  /** Adds a request; resolves with its result (and the server that served it, if `withServer`). */
  add(op: Op, args: unknown[], bound: string | undefined, withServer: boolean): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#pending.set(id, { op, args, bound, sentTo: undefined, withServer, resent: false, resolve, reject });
      this.#unsent.push(id);
      this.#queueSend();
    });
  }

  /** Sends again, from a microtask (requests were put back by {@link requeue}). */
  #queueSend(): void {
    if (!this.#sendQueued) {
      this.#sendQueued = true;
      queueMicrotask(() => {
        this.#sendQueued = false;
        this.#send();
      });
    }
  }

  /**
   * The requests not sent yet, in the order they were made (requests put back come first),
   * marked as sent to `server`; the next ones start a new message.
   */
  take(server: string): RequestMessage[] {
    if (this.#unsent.length === 0) {
      return [];
    }
    const ids = this.#unsent.sort((a, b) => a - b);
    this.#unsent = [];
    const requests: RequestMessage[] = [];
    for (const id of ids) {
      const pending = this.#pending.get(id);
      if (pending !== undefined && pending.sentTo === undefined) {
        pending.sentTo = server;
        const request = [id, pending.op, pending.args] as unknown as RequestMessage;
        if (pending.resent) {
          request[3] = 1;
        }
        requests.push(request);
      }
    }
    return requests;
  }

  /** Every pending request (to reroute them when the server changes). */
  entries(): IterableIterator<[number, Pending]> {
    return this.#pending.entries();
  }

  /** Puts request `id`, sent to a server that went away unanswered, back to be sent again. */
  requeue(id: number): void {
    const pending = this.#pending.get(id);
    if (pending !== undefined) {
      pending.sentTo = undefined;
      pending.resent = true;
      this.#unsent.push(id);
    }
  }

  /** Settles request `id` with `value` (`ok`) or a wire error. */
  settle(id: number, ok: boolean, value: unknown): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) {
      return;
    }
    this.#pending.delete(id);
    if (ok) {
      pending.resolve(pending.withServer ? [value, pending.sentTo ?? ""] : value);
    } else {
      const error = fromWire(value as Parameters<typeof fromWire>[0]);
      this.#onError(error);
      pending.reject(error);
    }
    this.#checkDrained();
  }

  /** Settles the requests `replies` answer, if `from` is the server they were sent to. */
  onReplies(from: string, replies: readonly Reply[]): void {
    for (const [id, ok, value] of replies) {
      const pending = this.#pending.get(id);
      if (pending !== undefined && pending.sentTo === from) {
        this.settle(id, ok, value);
      }
    }
  }

  /** Rejects request `id` with `error` (it will not be answered). */
  fail(id: number, error: ShaleError): void {
    const pending = this.#pending.get(id);
    if (pending !== undefined) {
      this.#pending.delete(id);
      pending.reject(error);
      this.#checkDrained();
    }
  }

  /** Rejects every pending request with `error`. */
  failAll(error: ShaleError): void {
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.reject(error);
    }
    this.#checkDrained();
  }

  /** Resolves once no request is pending (at once if none is). */
  drained(): Promise<void> {
    if (this.#pending.size === 0) {
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#drained = resolve;
    });
  }

  #checkDrained(): void {
    if (this.#pending.size === 0) {
      const drained = this.#drained;
      this.#drained = undefined;
      drained?.();
    }
  }
}
