/**
 * The reads of a Promise API watch: `watchRead` requests to the database's server, which waits
 * (without polling, `../server/queue-waits.ts`) until a commit matches; the watch's wait id lets
 * `stop()` and the database's `close()` end a read under way.
 *
 * @module
 */
import type { RangeBytes } from "../encoding/bounds.js";
import type { WatchSource } from "../engine/watch.js";
import { ShaleError } from "../errors.js";
import type { Transport } from "../transport/transport.js";
import type { Waits } from "../api/waits.js";

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
  let stopped = false;
  let waiting: number | undefined;
  let interrupt: (() => void) | undefined;
  return {
    async read(since, wait) {
      if (stopped || transport.closed) return undefined;
      const waitId = wait ? waits.start() : 0;
      waiting = wait ? waitId : undefined;
      const request = transport.request("watchRead", [keyspaceId, ranges, values, since, wait ? WAIT_MS : 0, waitId]);
      const interrupted = new Promise<undefined>((resolve) => {
        interrupt = () => resolve(undefined);
      });
      try {
        const batch = await Promise.race([request, interrupted]);
        return stopped ? undefined : batch;
      } catch (error) {
        if (error instanceof ShaleError && error.code === "CLOSED") {
          return undefined; // a watch ends when its database closes
        }
        throw error;
      } finally {
        request.catch(() => undefined);
        interrupt = undefined;
        if (wait) waits.open.delete(waitId);
        waiting = undefined;
      }
    },
    stop() {
      if (stopped) return;
      stopped = true;
      if (waiting !== undefined && !transport.closed) {
        transport.request("queueCancelWait", [waiting]).catch(() => undefined);
      }
      interrupt?.();
    },
  };
}
