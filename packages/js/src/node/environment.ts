/**
 * Where Node's databases live: directories of the local file system, behind `NodeFsStorage`.
 *
 * @module
 */
import { resolve } from "node:path";

import type { Environment } from "../engine/sync-database.js";
import { NodeFsStorage } from "./node-storage.js";

export const nodeEnvironment: Environment = {
  resolve: (location) => resolve(location),
  storage: (location, create) => new NodeFsStorage(location, { create }),
};
