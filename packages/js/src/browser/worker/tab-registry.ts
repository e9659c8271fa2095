/**
 * The owner's side of other tabs: pages whose worker does not own the database talk to the
 * owner over BroadcastChannels (`../messages.ts`). This registry welcomes them (or refuses:
 * `exclusive`, another release of the package), serves their messages through the owner's
 * server, watches their liveness locks, and forgets them — releasing what they had open, and
 * their applied-write records once they are gone for good.
 *
 * @module
 */
import { ownBuffers } from "../../transport/transferables.js";
import { ShaleError } from "../../errors.js";
import { ClientResources } from "../../server/client-resources.js";
import type { DatabaseServer } from "../../server/database-server.js";
import { toWire } from "../../transport/wire-error.js";
import { whenReleased } from "../locks.js";
import {
  PROTOCOL_VERSION,
  channelNames,
  lockNames,
  type FromOwner,
  type ToOwner,
} from "../messages.js";

interface RemoteClient {
  /** What it has open, its keyspace numbers; its id. */
  resources: ClientResources;
  channel: BroadcastChannel;
  /** Stops watching the client's liveness lock. */
  stopWatching: AbortController;
}

export class TabRegistry {
  readonly #owner: string;
  readonly #name: string;
  readonly #exclusive: boolean;
  readonly #server: DatabaseServer;
  /** The owner's own page: its records are never swept. */
  readonly #localClient: string;
  readonly #clients = new Map<string, RemoteClient>();
  readonly #requests: BroadcastChannel;
  #closed = false;
  /** Whether the applied-write records of pages gone were swept (once per owner). */
  #swept = false;

  /**
   * Starts listening on database `name`'s request channel as owner `owner`. `exclusive`: refuse
   * every other tab.
   */
  constructor(owner: string, name: string, exclusive: boolean, server: DatabaseServer, localClient: string) {
    this.#owner = owner;
    this.#name = name;
    this.#exclusive = exclusive;
    this.#server = server;
    this.#localClient = localClient;
    this.#requests = new BroadcastChannel(channelNames.requests(name));
    this.#requests.onmessage = (event: MessageEvent<ToOwner>) => this.#onMessage(event.data);
  }

  /**
   * Stops serving other tabs (the owner closes, or its instance panicked). The clients are not
   * gone: they send what this owner leaves unanswered to the next one, whose answers depend on
   * their applied-write records, which stay.
   */
  close(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    this.#requests.close();
    for (const client of this.#clients.keys()) {
      this.#forget(client, false);
    }
  }

  /** Once per owner, after the records' keyspace is open: sweeps the records of pages gone. */
  afterMessage(): void {
    if (this.#server.applied.opened && !this.#swept) {
      this.#swept = true;
      void this.#sweepApplied();
    }
  }

  #onMessage(message: ToOwner): void {
    if (this.#closed) {
      return;
    }
    switch (message.type) {
      case "hello":
        this.#hello(message.client, message.version);
        break;
      case "requests": {
        if (message.owner !== this.#owner) {
          return; // Meant for an earlier owner: the client resends them to this one.
        }
        const client = this.#clients.get(message.client) ?? this.#register(message.client);
        this.#server.applied.settled(message.client, message.settled);
        this.#server.serve(client.resources, message.requests, message.keyspaces, (replies) => {
          for (const reply of replies) {
            if (reply[1]) reply[2] = ownBuffers(reply[2]);
          }
          const answer: FromOwner = { type: "replies", owner: this.#owner, replies };
          if (client.resources.loseNextReplies && !message.requests.some((r) => r[1] === "debugLoseReplies")) {
            client.resources.loseNextReplies = false; // (a test hook: as if this tab went away now)
          } else if (this.#clients.get(message.client) === client) {
            client.channel.postMessage(answer);
          } else {
            // Forgotten meanwhile (a panic stops serving): it still gets these answers, so that
            // a request that panicked is not repeated on the next owner.
            const channel = new BroadcastChannel(channelNames.replies(message.client));
            channel.postMessage(answer);
            channel.close();
          }
        });
        break;
      }
      case "bye":
        if (message.owner === this.#owner) {
          this.#server.run(() => this.#forget(message.client, true));
        }
        break;
    }
  }

  #hello(client: string, version: number): void {
    const refuse = (message: string): void => {
      const channel = new BroadcastChannel(channelNames.replies(client));
      const error = toWire(new ShaleError("LOCKED", message));
      channel.postMessage({ type: "refused", owner: this.#owner, error } satisfies FromOwner);
      channel.close();
    };
    if (this.#exclusive) {
      refuse(
        `shaledb: database "${this.#name}" is open with { exclusive: true } in another tab or worker, which serves no other`,
      );
      return;
    }
    if (version !== PROTOCOL_VERSION) {
      refuse(
        `shaledb: database "${this.#name}" is open in another tab that runs a different version of shaledb ` +
          `(protocol ${PROTOCOL_VERSION}, this tab ${version}); reload or close that tab`,
      );
      return;
    }
    if (client === this.#localClient) {
      // The owner's own page, which said hello while this worker was taking over: it is
      // served by its worker directly (the "owner" message), never over the channels. A
      // welcome would let it send requests over a link it leaves on that message, whose
      // replies it would then never read.
      return;
    }
    const known = this.#clients.get(client) ?? this.#register(client);
    known.channel.postMessage({ type: "welcome", owner: this.#owner } satisfies FromOwner);
  }

  #register(id: string): RemoteClient {
    const client: RemoteClient = {
      resources: new ClientResources(id, true),
      channel: new BroadcastChannel(channelNames.replies(id)),
      stopWatching: new AbortController(),
    };
    this.#clients.set(id, client);
    // The client's page holds this lock while it is open: it comes free when the page goes.
    whenReleased(lockNames.client(id), client.stopWatching.signal, () => {
      this.#server.run(() => this.#forget(id, true));
    });
    return client;
  }

  /**
   * Stops serving client `id` and releases what it had open. `gone`: the client went away or
   * closed (it will send nothing again), so its applied-write record goes too.
   */
  #forget(id: string, gone: boolean): void {
    const client = this.#clients.get(id);
    if (client === undefined) {
      return;
    }
    this.#clients.delete(id);
    client.stopWatching.abort();
    client.channel.close();
    try {
      client.resources.closeAll();
    } catch {
      // After a panic nothing can be released; the instance is gone anyway.
    }
    if (gone && !this.#closed) {
      try {
        this.#server.applied.forget(id);
      } catch {
        // A failed write: a later sweep removes it.
      }
    }
  }

  /** Removes the applied-write records of pages that are gone (their client locks are free). */
  async #sweepApplied(): Promise<void> {
    let held: Set<string>;
    try {
      const snapshot = await navigator.locks.query();
      const prefix = lockNames.client("");
      held = new Set(
        [...(snapshot.held ?? []), ...(snapshot.pending ?? [])]
          .map((lock) => lock.name ?? "")
          .filter((name) => name.startsWith(prefix))
          .map((name) => name.slice(prefix.length)),
      );
    } catch {
      return; // Kept until a later owner sweeps.
    }
    this.#server.run(() => {
      if (this.#closed) {
        return;
      }
      try {
        this.#server.applied.sweep(
          (client) => client === this.#localClient || held.has(client) || this.#clients.has(client),
        );
      } catch {
        // A failed write: the next owner sweeps again.
      }
    });
  }
}
