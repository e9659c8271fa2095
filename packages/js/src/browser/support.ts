/**
 * What the browser backend needs of the page (and of its worker): the Origin Private File System
 * (`navigator.storage.getDirectory`) and Web Locks (`navigator.locks`). Browsers offer both only
 * to secure contexts — pages served over https, or from localhost — so on plain http from a LAN
 * address they are simply missing; this turns that into a clear error up front.
 *
 * @module
 */
import { ShaleError } from "../errors.js";

/** The part of the global scope checked (a window or a worker). */
interface Scope {
  isSecureContext?: boolean;
  location?: { origin?: string };
  navigator?: {
    locks?: { request?: unknown };
    storage?: { getDirectory?: unknown };
  };
}

/**
 * Throws `IO` naming what is missing, and why, unless OPFS and Web Locks are both available
 * here. Cheap: call it before anything that needs them.
 */
export function requireStorageApis(): void {
  const scope = globalThis as Scope;
  const missing: string[] = [];
  if (typeof scope.navigator?.storage?.getDirectory !== "function") {
    missing.push("the Origin Private File System (navigator.storage.getDirectory)");
  }
  if (typeof scope.navigator?.locks?.request !== "function") {
    missing.push("Web Locks (navigator.locks)");
  }
  if (missing.length === 0) {
    return;
  }
  const origin = scope.location?.origin ?? "this page";
  const why =
    scope.isSecureContext === false
      ? `${origin} is not a secure context: browsers offer OPFS and Web Locks only to pages served over https or from localhost`
      : "this browser lacks them (ShaleDB needs Chromium 108+, Firefox 111+ or Safari 16.4+), or they are disabled here";
  throw new ShaleError(
    "IO",
    `shaledb: ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not available: ${why}. ` +
      "OPFS and Web Locks need a secure context: serve the page over https, or from localhost",
  );
}

/** Whether this code runs in a dedicated worker (where OPFS sync access handles exist). */
export function inDedicatedWorker(): boolean {
  const scope = globalThis as { DedicatedWorkerGlobalScope?: abstract new () => unknown };
  return scope.DedicatedWorkerGlobalScope !== undefined && globalThis instanceof scope.DedicatedWorkerGlobalScope;
}
