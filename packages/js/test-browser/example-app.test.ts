// examples/browser (the notes app) the way a user runs it after `npm install shaledb`: the
// package packed (`npm pack`) and extracted as a real directory into node_modules — not the
// workspace symlink, which Vite does not pre-bundle — so the dev server pre-bundles `shaledb`
// into node_modules/.vite/deps/, where `new URL("./worker.js", import.meta.url)` must still find
// the worker and the worker its WebAssembly module. Then in the test browser (headless Chromium,
// or Firefox ESR with SHALEDB_BROWSER=firefox: one test, through the fixtures' TestPage), once on
// the dev server (Vite's JS API) and once on `vite build` + `vite preview`: the empty state, add
// notes, search by title prefix, delete and undo, reload, a second tab served by the first,
// export (a real download) and a restore (refused while the second tab is open), no engine
// internals on the page; and the built app offline (service worker, manifest): a reload with the
// network off (the browser's offline emulation, which the service worker's requests obey too:
// checked) shows the notes. Any page error, failed request or error shown by the app fails it.
//
// Needs the package built (npm run build -w shaledb). No network: vite comes from the
// repository's node_modules (symlinked into the copy).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { createServer, preview, type PreviewServer, type ViteDevServer } from "vite";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

import { FIREFOX, Profile, type TestContext, type TestPage } from "./fixtures/browser.js";
import { childEnv, installLikeAUser, run } from "./fixtures/packed-app.js";

/** The temporary directory of this file's tests (set by beforeAll). */
let tmp = "";

/** `<tmp>/damaged.tar`: a database directory whose CURRENT names a manifest that is not there. */
async function damagedArchive(): Promise<string> {
  const dir = join(tmp, "damaged");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "CURRENT"), "MANIFEST-000099\n");
  await run("tar", ["-cf", join(tmp, "damaged.tar"), "-C", dir, "CURRENT"]);
  return join(tmp, "damaged.tar");
}

/**
 * Watches a tab (and its workers, whose requests are reported on the page): page errors,
 * failed requests and HTTP errors go to `problems`, the path of every file loaded to `loaded`.
 */
function watch(page: TestPage, problems: string[], loaded: Set<string>): void {
  page.onPageError((message) => problems.push(`page error: ${message}`));
  page.onRequestFailed((request) => {
    // Cancelled, not failed: by a reload, or by the end of a worker. (importDatabase ends its
    // worker as soon as the import fails, here with LOCKED, possibly while it fetches the .wasm.)
    if (request.aborted) return;
    problems.push(`request failed: ${request.url} (${request.errorText})`);
  });
  page.onResponse((response) => {
    if (response.status >= 400) problems.push(`HTTP ${response.status}: ${response.url}`);
    else loaded.add(new URL(response.url).pathname);
  });
}

/** Polls `read` until the expectation holds (each step of the app takes a while on a busy machine). */
const eventually = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

const titles = (page: TestPage) => page.texts("#notes h3");

/** Waits for the app's "Ready" (or the error it shows instead); fails on errors so far. */
async function ready(page: TestPage, problems: string[]): Promise<void> {
  await page.waitForFunction(
    () =>
      document.querySelector("#status")?.textContent?.startsWith("Ready") ||
      !document.querySelector<HTMLElement>("#error")?.hidden,
  );
  expect({ shown: await noError(page), problems }).toEqual({ shown: "", problems: [] });
}

/** The app's error box: "" when hidden. */
async function noError(page: TestPage): Promise<string> {
  return (await page.isVisible("#error")) ? ((await page.text("#error")) ?? "") : "";
}

async function addNote(page: TestPage, title: string, body: string): Promise<void> {
  const before = (await titles(page)).length;
  await page.fill("#title", title);
  await page.fill("#body", body);
  await page.click("#add");
  // The note, or the error the app shows instead (then the failure says which).
  await page.waitForFunction(
    (n) =>
      document.querySelectorAll("#notes li").length === n || !document.querySelector<HTMLElement>("#error")?.hidden,
    before + 1,
  );
  expect(await noError(page)).toBe("");
  expect((await titles(page)).length).toBe(before + 1);
}

/** The Delete button of the note titled `title`. */
const deleteButton = (title: string) => ({
  selector: "button",
  hasText: "Delete",
  within: { selector: "#notes li", hasText: title },
});

async function search(page: TestPage, query: string, expected: string[]): Promise<void> {
  await page.fill("#search", query);
  await eventually(() => titles(page)).toEqual(expected);
}

/** The whole tour of the app on `origin`, in a fresh tab (and a second one). */
/** The steps the running test reached, printed if it fails (a timeout then says where it stood). */
const steps: string[] = [];
function step(name: string): void {
  steps.push(`${Math.round(performance.now())} ms: ${name}`);
}

async function tour(context: TestContext, origin: string, loaded: Set<string>): Promise<void> {
  const problems: string[] = [];
  const page = await context.newPage();
  watch(page, problems, loaded);
  page.acceptDialogs();
  await page.goto(origin + "/");
  await ready(page, problems);
  expect(await titles(page)).toEqual([]);
  step("The empty state");
  // The empty state: a first visit says what to do, and goes once there is a note.
  expect(await page.isVisible("#empty")).toBe(true);

  await addNote(page, "Shopping list", "milk, bread");
  expect(await page.isVisible("#empty")).toBe(false);
  await addNote(page, "Reading list", "DDIA, chapter 3");
  await addNote(page, "Shop opening hours", "9 to 18");
  step("Newest first");
  // Newest first.
  expect(await titles(page)).toEqual(["Shop opening hours", "Reading list", "Shopping list"]);

  step("A delete can be undone");
  // A delete can be undone: the note comes back in its place.
  await page.click(deleteButton("Shopping list"));
  await eventually(() => titles(page)).toEqual(["Shop opening hours", "Reading list"]);
  expect(await page.text("#undo-text")).toBe("Deleted “Shopping list”.");
  await page.click("#undo-button");
  await eventually(() => titles(page)).toEqual(["Shop opening hours", "Reading list", "Shopping list"]);
  expect(await page.isVisible("#undo")).toBe(false);
  await search(page, "shopp", ["Shopping list"]); // its index entry is back too
  await search(page, "", ["Shop opening hours", "Reading list", "Shopping list"]);

  step("Prefix search over the title index");
  // Prefix search over the title index: sorted by title, case-insensitive.
  await search(page, "sho", ["Shop opening hours", "Shopping list"]);
  await search(page, "SHOPP", ["Shopping list"]);
  await search(page, "x", []);
  await search(page, "", ["Shop opening hours", "Reading list", "Shopping list"]);

  step("Delete");
  // Delete removes the note and its index entry (one batch).
  await page.click(deleteButton("Reading list"));
  await eventually(() => titles(page)).toEqual(["Shop opening hours", "Shopping list"]);
  await search(page, "read", []);
  await search(page, "", ["Shop opening hours", "Shopping list"]);

  step("Persisted");
  // Persisted: a reload opens the database again from OPFS.
  await page.reload();
  await ready(page, problems);
  expect(await titles(page)).toEqual(["Shop opening hours", "Shopping list"]);
  expect(await page.text("#summary")).toBe("2 notes");

  step("Export");
  // Export: a download of a tar archive.
  const archive = join(tmp, `notes-${Date.now()}.tar`);
  await page.download("#export", archive);
  const tar = readFileSync(archive);
  expect(tar.length % 512).toBe(0);
  expect(tar.includes(Buffer.from("CURRENT"))).toBe(true);

  step("A second tab");
  // A second tab: served by the first (which owns the database), and both stay in step.
  const second = await context.newPage();
  watch(second, problems, loaded);
  await second.goto(origin + "/");
  await ready(second, problems);
  expect(await titles(second)).toEqual(["Shop opening hours", "Shopping list"]);
  await addNote(second, "Added in tab 2", "");
  await eventually(() => titles(page)).toEqual(["Added in tab 2", "Shop opening hours", "Shopping list"]);

  step("Restoring the backup needs the database to itself");
  // Restoring the backup needs the database to itself: LOCKED while the second tab is open...
  await page.setInputFile("#import", archive);
  await eventually(() => noError(page)).toMatch(/^The notes are open in another tab/);
  expect(await titles(page)).toEqual(["Added in tab 2", "Shop opening hours", "Shopping list"]);
  step("Restoring once the second tab is closed");
  // ...and it works once that tab is closed.
  await second.close();
  await page.setInputFile("#import", archive);
  await eventually(() => titles(page)).toEqual(["Shop opening hours", "Shopping list"]);
  expect(await noError(page)).toBe("");

  step("A damaged backup");
  // A damaged backup (its CURRENT names a missing manifest) is refused, and the notes stay.
  await page.setInputFile("#import", await damagedArchive());
  await eventually(() => noError(page)).toMatch(/^This backup file is damaged/);
  expect(await titles(page)).toEqual(["Shop opening hours", "Shopping list"]);

  await page.reload();
  await ready(page, problems);
  expect(await titles(page)).toEqual(["Shop opening hours", "Shopping list"]);
  step("No engine internals on the page");
  // No engine internals on the page: no error codes, file counts or tables.
  const text = (await page.text("body")) ?? "";
  expect(text).not.toMatch(/OPFS|LOCKED|CORRUPTION|worker|Tables per level|Entries/);
  await page.close();
  expect(problems).toEqual([]);
}

/**
 * Whether a request from the page (through its service worker, when it has one) reaches the
 * server: a file the service worker never kept, so that only the network can answer it.
 */
const reachesTheServer = (page: TestPage) =>
  page.evaluate(async () => {
    try {
      await fetch(`/never-kept-${Date.now()}`, { cache: "no-store" });
      return true;
    } catch {
      return false;
    }
  });

/**
 * The built app is an installable offline app: a web app manifest with icons, and a service
 * worker that keeps a copy of the app, so that a reload without any network still shows the notes.
 */
async function offline(context: TestContext, origin: string, expected: string[]): Promise<void> {
  const problems: string[] = [];
  const page = await context.newPage();
  page.onPageError((message) => problems.push(`page error: ${message}`));
  await page.goto(origin + "/");
  await ready(page, problems);
  const manifest = await page.evaluate(async () => {
    const link = document.querySelector<HTMLLinkElement>('link[rel="manifest"]');
    const json = (await (await fetch(link?.href ?? "")).json()) as { icons?: { sizes: string }[]; display?: string };
    return { display: json.display, icons: (json.icons ?? []).map((icon) => icon.sizes) };
  });
  expect(manifest).toEqual({ display: "standalone", icons: ["192x192", "512x512"] });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  expect(await reachesTheServer(page)).toBe(true);
  await context.setOffline(true);
  try {
    await page.reload();
    await ready(page, problems);
    expect(await titles(page)).toEqual(expected);
    // Really offline, the service worker's own requests included: what it did not keep fails.
    expect(await reachesTheServer(page)).toBe(false);
    // And a new tab, offline too.
    const second = await context.newPage();
    second.onPageError((message) => problems.push(`page error: ${message}`));
    await second.goto(origin + "/");
    await ready(second, problems);
    expect(await titles(second)).toEqual(expected);
    expect(await reachesTheServer(second)).toBe(false);
    await second.close();
  } finally {
    await context.setOffline(false);
  }
  expect(await reachesTheServer(page)).toBe(true);
  await page.close();
  expect(problems).toEqual([]);
}

/**
 * The README's promise for several tabs: a second tab, served by the first, goes on adding,
 * searching and deleting notes after the first tab (the owner) closes — its keyspace handle of
 * the title index included.
 */
async function secondTabAfterTheFirstCloses(context: TestContext, origin: string): Promise<void> {
  const problems: string[] = [];
  const loaded = new Set<string>();
  const first = await context.newPage();
  watch(first, problems, loaded);
  await first.goto(origin + "/");
  await ready(first, problems);
  await addNote(first, "From the first tab", "");
  const second = await context.newPage();
  watch(second, problems, loaded);
  await second.goto(origin + "/");
  await ready(second, problems); // served by the first tab
  await addNote(second, "Second tab, before", "");
  await first.close(); // the owner goes: the second tab's worker takes over

  await addNote(second, "Second tab, after", "");
  expect(await titles(second)).toEqual(["Second tab, after", "Second tab, before", "From the first tab"]);
  await search(second, "second tab", ["Second tab, after", "Second tab, before"]);
  await search(second, "from", ["From the first tab"]);
  await search(second, "", ["Second tab, after", "Second tab, before", "From the first tab"]);
  await second.click(deleteButton("Second tab, before"));
  await eventually(() => titles(second)).toEqual(["Second tab, after", "From the first tab"]);
  await search(second, "second", ["Second tab, after"]);
  expect(await noError(second)).toBe("");

  // And the data is the database's, not the tab's: a reload reads it back.
  await second.reload();
  await ready(second, problems);
  await search(second, "", ["Second tab, after", "From the first tab"]);
  await second.close();
  expect(problems).toEqual([]);
}

describe("examples/browser, installed from npm pack", () => {
  let app = "";
  let profile: Profile;
  let context: TestContext;

  beforeAll(async () => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), "shaledb-example-")));
    profile = new Profile();
    [app, context] = await Promise.all([installLikeAUser(tmp, "browser", ["vite"], { vite: "vite/bin/vite.js" }), profile.launch()]);
  });

  beforeEach(() => {
    steps.length = 0;
  });
  afterEach((test) => {
    if (test.task.result?.state === "fail") console.error(`example-app: the steps reached\n${steps.join("\n")}`);
  });

  afterAll(async () => {
    await profile?.dispose();
    if (tmp !== "") rmSync(tmp, { recursive: true, force: true });
  });

  // Vite's pre-bundling is the same whatever the browser; Firefox runs the built app below.
  it.skipIf(FIREFOX)("works on the Vite dev server, which pre-bundles shaledb", async () => {
    const server: ViteDevServer = await createServer({
      root: app,
      configFile: false,
      logLevel: "warn",
      server: { host: "127.0.0.1", port: 0, strictPort: true },
    });
    try {
      await server.listen();
      const origin = new URL(server.resolvedUrls!.local[0]!).origin;
      const loaded = new Set<string>();
      await tour(context, origin, loaded);
      // It really was pre-bundled: the page imported it from node_modules/.vite/deps/, and the
      // worker and the WebAssembly module were still found (in the package's own folder).
      expect(existsSync(join(app, "node_modules", ".vite", "deps", "shaledb.js"))).toBe(true);
      expect(loaded).toContain("/node_modules/.vite/deps/shaledb.js");
      expect(loaded).not.toContain("/node_modules/shaledb/dist/browser.js");
      expect(loaded).toContain("/node_modules/shaledb/dist/browser/worker.js");
      expect(loaded).toContain("/node_modules/shaledb/wasm/shaledb_wasm_bg.wasm");
    } finally {
      await server.close();
    }
  });

  it("a second tab keeps adding, searching and deleting notes after the first tab closes", async () => {
    const server: ViteDevServer = await createServer({
      root: app,
      configFile: false,
      logLevel: "warn",
      server: { host: "127.0.0.1", port: 0, strictPort: true },
    });
    try {
      await server.listen();
      await secondTabAfterTheFirstCloses(context, new URL(server.resolvedUrls!.local[0]!).origin);
    } finally {
      await server.close();
    }
  });

  it("works after vite build, on vite preview, and as an installed app reloads with the network off", async () => {
    step("vite build");
    await run("npm", ["run", "build", "--silent"], { cwd: app, env: childEnv() });
    const server: PreviewServer = await preview({
      root: app,
      configFile: false,
      logLevel: "warn",
      preview: { host: "127.0.0.1", port: 0, strictPort: true },
    });
    try {
      const origin = new URL(server.resolvedUrls!.local[0]!).origin;
      const loaded = new Set<string>();
      await tour(context, origin, loaded);
      step("offline");
      await offline(context, origin, ["Shop opening hours", "Shopping list"]);
      // The worker and the WebAssembly module became assets of the build.
      expect([...loaded].filter((path) => /worker|\.wasm$/.test(path))).toEqual([
        expect.stringMatching(/^\/assets\/worker-[\w-]+\.js$/),
        expect.stringMatching(/^\/assets\/shaledb_wasm_bg-[\w-]+\.wasm$/),
      ]);
    } finally {
      await server.close();
    }
  });
});
