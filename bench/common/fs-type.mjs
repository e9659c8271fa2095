// Node-side helper of the benchmark runners: where their databases may live.
import { readFileSync } from "node:fs";

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
