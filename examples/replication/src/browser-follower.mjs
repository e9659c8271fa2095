// The browser follower's entry (bundled for the page by a bundler such as rolldown: the NATS
// clients are CommonJS): a NATS connection over the server's WebSocket listener, the same
// follower loop and checksum as in Node. The page opens its database with the package's
// browser entry (`open(name, { follower: true, ... })`) and passes it in.
import { wsconnect } from "@nats-io/nats-core";
import { checksum } from "./checksum.mjs";
import { startFollower } from "./follower.mjs";
import { ensureStream } from "./stream.mjs";

export { checksum, startFollower };

/** Connects to NATS at `wsUrl` (`ws://host:port`) and makes sure the stream exists. */
export async function connectOverWebSocket(wsUrl) {
  const nc = await wsconnect({ servers: wsUrl });
  await ensureStream(nc);
  return nc;
}
