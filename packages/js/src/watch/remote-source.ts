/**
 * The reads of a Promise API watch: `watchRead` requests to the database's server, which waits
 * (without polling, `../server/queue-waits.ts`) until a commit matches; `stop()` and the
 * database's `close()` end a read under way (`../api/waiting-request.ts`).
 *
 * @module
 */
import { WaitingRequest } from "../api/waiting-request.js";
import type { Waits } from "../api/waits.js";
import type { RangeBytes } from "../encoding/bounds.js";
import type { WatchSource } from "../engine/watch.js";
import type { Transport } from "../transport/transport.js";

/** How long one read waits on the server before the watch asks again. */
const WAIT_MS = 60_000;

/** A watch of keyspace number `keyspaceId` (the transport's) over `ranges`. */
export function remoteWatchSource(
  transport: Transport,
  waits: Waits,
  keyspaceId: number,
  ranges: RangeBytes[],
  values: boolean,
): WatchSource {
  const request = new WaitingRequest(transport, waits);
  return {
    read(since, wait) {
      if (request.stopped || transport.closed) return Promise.resolve(undefined);
      // A watch ends when its database closes.
      return request.send(wait, true, (waitId) =>
        transport.request("watchRead", [keyspaceId, ranges, values, since, wait ? WAIT_MS : 0, waitId]),
      );
    },
    stop: () => request.stop(),
  };
}
