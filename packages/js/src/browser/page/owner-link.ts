/**
 * A page's link to the owner of its database in another tab (or another worker of this one):
 * the BroadcastChannels of `../messages.ts`, the hello a page repeats until an owner welcomes
 * it, the owners' announcements, and the page's liveness lock, which the owner watches to learn
 * when the page goes.
 *
 * @module
 */
import type { ShaleError } from "../../errors.js";
import type { Reply } from "../../transport/requests.js";
import { fromWire } from "../../transport/wire-error.js";
import type { Release } from "../locks.js";
import {
  PROTOCOL_VERSION,
  channelNames,
  type FromOwner,
  type OwnerAnnouncement,
  type ToOwner,
} from "../messages.js";

/** How often a page repeats its hello while no owner has answered. */
const HELLO_INTERVAL_MS = 250;

/** What the link reports to its connection. */
export interface OwnerLinkEvents {
  /** The owner serving the page now (`undefined`: none yet). */
  currentOwner(): string | undefined;
  /** Owner `owner` welcomed the page. */
  welcomed(owner: string): void;
  /** The owner refused the page (`exclusive`, or another release of the package). */
  refused(error: ShaleError): void;
  /** Replies from owner `owner`. */
  replies(owner: string, replies: Reply[]): void;
  /** Another owner announced itself: the one serving the page went away. */
  ownerGone(): void;
}

export class OwnerLink {
  readonly #client: string;
  readonly #events: OwnerLinkEvents;
  readonly #requests: BroadcastChannel;
  readonly #replies: BroadcastChannel;
  readonly #announcements: BroadcastChannel;
  readonly #releaseLock: Release;
  #helloTimer: ReturnType<typeof setInterval> | undefined;
  /** The owner the last announcement named: only its welcome counts. */
  #announced: string | undefined;

  /**
   * Opens the channels of database `name` for page `client`, which holds its liveness lock
   * (`releaseLock` lets go of it when the link is left).
   */
  constructor(client: string, name: string, releaseLock: Release, events: OwnerLinkEvents) {
    this.#client = client;
    this.#events = events;
    this.#releaseLock = releaseLock;
    this.#requests = new BroadcastChannel(channelNames.requests(name));
    this.#replies = new BroadcastChannel(channelNames.replies(client));
    this.#announcements = new BroadcastChannel(channelNames.announcements(name));
    this.#replies.onmessage = (event: MessageEvent<FromOwner>) => this.#fromOwner(event.data);
    this.#announcements.onmessage = (event: MessageEvent<OwnerAnnouncement>) => {
      this.#announced = event.data.owner;
      if (event.data.owner !== events.currentOwner()) {
        events.ownerGone();
        this.hello();
      }
    };
  }

  /** Says hello now, and again every {@link HELLO_INTERVAL_MS} until an owner answers. */
  hello(): void {
    const say = (): void => {
      this.#requests.postMessage({
        type: "hello",
        client: this.#client,
        version: PROTOCOL_VERSION,
      } satisfies ToOwner);
    };
    say();
    this.#helloTimer ??= setInterval(say, HELLO_INTERVAL_MS);
  }

  #stopHello(): void {
    clearInterval(this.#helloTimer);
    this.#helloTimer = undefined;
  }

  /** Sends `message` to the owners' request channel (throws if it cannot be cloned). */
  send(message: ToOwner): void {
    this.#requests.postMessage(message);
  }

  #fromOwner(message: FromOwner): void {
    switch (message.type) {
      case "welcome":
        // A late welcome from an owner that has since been replaced does not count.
        if (
          this.#events.currentOwner() !== message.owner &&
          (this.#announced ?? message.owner) === message.owner
        ) {
          this.#stopHello();
          this.#events.welcomed(message.owner);
        }
        break;
      case "refused":
        this.#stopHello();
        this.#events.refused(fromWire(message.error));
        break;
      case "replies":
        this.#events.replies(message.owner, message.replies);
        break;
    }
  }

  /**
   * Leaves: says goodbye to `owner` if given (it releases what the page had open, and forgets
   * the page's applied-write record), closes the channels and releases the liveness lock.
   */
  leave(owner: string | undefined): void {
    this.#stopHello();
    if (owner !== undefined) {
      this.#requests.postMessage({ type: "bye", client: this.#client, owner } satisfies ToOwner);
    }
    this.#requests.close();
    this.#replies.close();
    this.#announcements.close();
    this.#releaseLock();
  }
}
