/**
 * The owner's side of keyspace numbers. A page numbers the keyspaces it opens itself (1, 2, ...
 * in the order it first asks for them; 0 is the default keyspace) and keeps those numbers for
 * the life of its connection, whichever worker owns the database. Each owner keeps, per client,
 * the map from the client's numbers to its engine's own (which depend on the order in which
 * that owner's engine opened them). A new owner learns a client's keyspaces by name: the page
 * declares them in its first message to it (`../transport/requests.ts`). So no takeover can make a handle
 * name another keyspace.
 *
 * @module
 */
import { invalidArgument, type ShaleError } from "../errors.js";
import {
  OP_ACK,
  OP_APPEND,
  OP_COMMIT_OFFSET,
  OP_DELETE,
  OP_DELETE_RANGE,
  OP_PUSH,
  OP_PUT,
} from "../encoding/wire.js";

/** A client's keyspace number bound to its engine number, or why it could not be opened. */
type Binding = { engine: number } | { failure: ShaleError };

export class ClientKeyspaces {
  readonly #bindings = new Map<number, Binding>([[0, { engine: 0 }]]);
  /** Whether every binding maps a number to itself (then packed batches need no rewriting). */
  #identity = true;

  /** Binds the client's keyspace `number` to engine keyspace `engine`. */
  bind(number: number, engine: number): void {
    checkNumber(number);
    this.#bindings.set(number, { engine });
    this.#identity &&= number === engine;
  }

  /** Records that the client's keyspace `number` could not be opened: its requests fail so. */
  fail(number: number, failure: ShaleError): void {
    checkNumber(number);
    this.#bindings.set(number, { failure });
    this.#identity = false;
  }

  /** Whether the client's keyspace `number` is bound (or failed). */
  has(number: number): boolean {
    return this.#bindings.has(number);
  }

  /** The engine number of the client's keyspace `number`; throws if it is not open. */
  engine(number: number): number {
    const binding = this.#bindings.get(number);
    if (binding === undefined) {
      throw invalidArgument(`no keyspace number ${number} is open for this page`);
    }
    if ("failure" in binding) {
      throw binding.failure;
    }
    return binding.engine;
  }

  /**
   * Packed batch operations (`../encoding/packed-ops.ts`) with the client's keyspace numbers replaced by the
   * engine's: the same bytes when nothing changes, else a copy. A number that is not open, an
   * unknown operation or truncated bytes are `INVALID_ARGUMENT` (nothing is written then).
   */
  remap(
    packed: Uint8Array,
    queueNumber?: (index: number) => number,
    topicNumber?: (index: number) => number,
  ): Uint8Array {
    if (this.#identity && queueNumber === undefined) {
      return packed;
    }
    let out: Uint8Array | undefined;
    const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
    const truncated = () => invalidArgument("truncated batch");
    let at = 0;
    while (at < packed.length) {
      if (at + 5 > packed.length) throw truncated();
      const op = view.getUint8(at);
      const number = view.getUint32(at + 1, true);
      const queueOp = op === OP_PUSH || op === OP_ACK;
      const topicOp = op === OP_APPEND || op === OP_COMMIT_OFFSET;
      if ((queueOp && queueNumber === undefined) || (topicOp && topicNumber === undefined)) {
        throw invalidArgument("queue and topic operations must come with their queues and topics (a queueWrite request)");
      }
      const engine =
        queueOp && queueNumber !== undefined
          ? queueNumber(number)
          : topicOp && topicNumber !== undefined
            ? topicNumber(number)
            : this.engine(number);
      if (engine !== number) {
        out ??= packed.slice();
        new DataView(out.buffer).setUint32(at + 1, engine, true);
      }
      at += 5;
      const fields =
        op === OP_DELETE || op === OP_ACK || op === OP_APPEND
          ? 1
          : op === OP_PUT || op === OP_DELETE_RANGE || op === OP_PUSH || op === OP_COMMIT_OFFSET
            ? 2
            : 0;
      if (fields === 0) {
        throw invalidArgument(`unknown batch op ${op}`);
      }
      for (let i = 0; i < fields; i++) {
        if (at + 4 > packed.length) throw truncated();
        at += 4 + view.getUint32(at, true);
      }
      if (at > packed.length) throw truncated();
    }
    return out ?? packed;
  }
}

function checkNumber(number: number): void {
  if (!Number.isInteger(number) || number < 1 || number > 0xffff_ffff) {
    throw invalidArgument(`a keyspace number must be a whole number from 1 to 2^32 - 1, got ${number}`);
  }
}
