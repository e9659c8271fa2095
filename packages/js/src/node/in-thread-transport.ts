/**
 * A {@link Transport} to a server in this thread (`node-server.ts`): the Promise API with
 * `engineThread: "caller"`. Requests made in one turn of the event loop go to the server as one
 * message in a later turn (`setImmediate`), so every call of the Promise API yields to the event
 * loop, and replies settle their promises there. No thread hop, so single awaited calls are
 * fast; but the engine's longer steps (maintenance with its fsyncs, `compact()`) run on the event
 * loop (the default, `worker-transport.ts`, keeps them off it).
 *
 * @module
 */
import type { ShaleError } from "../errors.js";
import type { DatabaseServer } from "../server/database-server.js";
import { ClientResources } from "../server/client-resources.js";
import { OneServerTransport } from "../transport/one-server-transport.js";
import type { KeyspaceDeclaration, RequestMessage } from "../transport/requests.js";

export class InThreadTransport extends OneServerTransport {
  readonly location: string;
  readonly #server: DatabaseServer;
  readonly #client = new ClientResources("node", false);

  constructor(server: DatabaseServer) {
    super("this-thread");
    this.#server = server;
    this.location = server.db.location;
  }

  /** Hands the requests made in this turn to the server, in a later turn. */
  protected deliver(requests: RequestMessage[], keyspaces: KeyspaceDeclaration[] | undefined): void {
    setImmediate(() => {
      this.#server.serve(this.#client, requests, keyspaces, (replies) => this.replies(replies));
    });
  }

  /** Waits for the requests under way, then closes the database (after them, in its queue). */
  protected async closeServer(): Promise<void> {
    await this.drained();
    await new Promise<void>((resolve, reject) => {
      this.#server.run(async () => {
        try {
          // The maintenance worker first: no job of this open writes on after the close.
          await this.#server.stop();
          this.#client.closeAll();
          this.#server.db.close();
          resolve();
        } catch (error) {
          reject(error as ShaleError);
        }
      });
    });
  }
}
