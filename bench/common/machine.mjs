// Node-side helpers of the benchmark runners: the machine they report, and where their
// databases may live.
import { readFileSync } from "node:fs";
import { cpus } from "node:os";

/** "<cores>x <CPU model>", as every suite (and the Rust harness) writes its `host`. */
export function host() {
  let model = "";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").split("\n").find((l) => l.startsWith("model name"));
    model = line ? line.split(":")[1].trim() : "";
  } catch {
    model = cpus()[0]?.model ?? process.arch;
  }
  return `${cpus().length}x ${model || process.arch}`.replace(/"/g, "'");
}

/**
 * The file system type of the mount holding `path` (the longest mount point that contains it),
 * or "" where /proc/mounts cannot tell (not Linux). Runners use it to keep databases off tmpfs
 * (memory, not disk).
 */
export function fsType(path) {
  try {
    let best = "";
    let type = "";
    for (const line of readFileSync("/proc/mounts", "utf8").split("\n")) {
      const [, mnt, fstype] = line.split(" ");
      if (mnt && (path === mnt || path.startsWith(mnt.endsWith("/") ? mnt : mnt + "/")) && mnt.length > best.length) {
        best = mnt;
        type = fstype;
      }
    }
    return type;
  } catch {
    return "";
  }
}
