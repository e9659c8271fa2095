// The server checks every request against its row of the operations table
// (src/server/operations/table.ts) as a message arrives: a malformed one (unknown, wrong
// argument types, too many arguments) gets INVALID_ARGUMENT and reaches nothing, and the other
// requests of its message are carried out.
import { describe, expect, it } from "vitest";

import "../src/node.js"; // registers the module's loader (for the src modules)

import { ensureLoadedSync } from "../src/engine/instance.js";
import { openNodeServer } from "../src/node/node-server.js";
import { ClientResources } from "../src/server/client-resources.js";
import { OPERATIONS } from "../src/server/operations/table.js";
import type { Reply, RequestMessage } from "../src/transport/requests.js";
import { freshPath } from "./helpers.js";

function serve(requests: unknown[]): Promise<Reply[]> {
  ensureLoadedSync();
  const server = openNodeServer(freshPath("requests"), { autoMaintenance: false });
  const client = new ClientResources("test", false);
  return new Promise((resolve) => {
    server.serve(client, requests as RequestMessage[], undefined, (replies) => {
      server.db.close();
      resolve(replies);
    });
  });
}

describe("requests as they arrive at a server", () => {
  it("a malformed request is INVALID_ARGUMENT; the rest of its message is carried out", async () => {
    const key = new Uint8Array([1]);
    const replies = await serve([
      [1, "put", [0, key, new Uint8Array([2]), false]],
      [2, "noSuchRequest", []],
      [3, "get", ["0", key, 0]],
      [4, "put", [0, 42, new Uint8Array([2]), false]],
      [8, "put", [0, "\ud800", new Uint8Array([2]), false]],
      [9, "put", [0, "text key", "text value", false]],
      [10, "get", [0, "text key", 0]],
      [5, "get", [0, key, 0, "extra"]],
      [6, "queueRead", ["q", "", 7, 1, 0, 0, 0]],
      [7, "get", [0, key, 0]],
    ]);
    const byId = new Map(replies.map((r) => [r[0], r]));
    expect(byId.get(1)?.[1]).toBe(true);
    for (const id of [2, 3, 4, 5, 6, 8]) {
      const reply = byId.get(id);
      expect(reply?.[1], `request ${id}`).toBe(false);
      expect((reply?.[2] as { code: string }).code).toBe("INVALID_ARGUMENT");
    }
    expect((byId.get(3)?.[2] as { message: string }).message).toContain("request get: argument 0 must be a whole number");
    expect((byId.get(4)?.[2] as { message: string }).message).toContain(
      "request put: argument 1 must be a Uint8Array or well-formed text",
    );
    expect(byId.get(7)?.[2]).toEqual(new Uint8Array([2]));
    // Checked text (what the Promise API sends for "utf8" keys and "utf8"/"json" values) is
    // stored as its UTF-8.
    expect(byId.get(9)?.[1]).toBe(true);
    expect(byId.get(10)?.[2]).toEqual(new TextEncoder().encode("text value"));
  });

  it("every row declares checks for its arguments and a run", () => {
    for (const [op, row] of Object.entries(OPERATIONS)) {
      expect(Array.isArray(row.args), op).toBe(true);
      expect(typeof row.run, op).toBe("function");
    }
  });
});
