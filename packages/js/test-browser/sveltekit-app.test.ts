// examples/sveltekit (a client-only SvelteKit page, static adapter) the way a user builds it after
// `npm install shaledb`: the package packed and extracted into the app's node_modules, SvelteKit
// and Vite from the repository's node_modules, `vite build`, the output served as a host serves
// a single-page app. In the test browser: its live query (`db.liveQuery`) draws the list, and
// redraws it after writes made in this tab and in a second tab (served by the first); a reload
// keeps the items. Any page error, failed request or HTTP error fails it. No bundler settings
// beyond SvelteKit's own: the worker and the WebAssembly module are Vite assets.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import { Profile, type TestContext, type TestPage } from "./fixtures/browser.js";
import { childEnv, installLikeAUser, run } from "./fixtures/packed-app.js";
import { serveStatic, type StaticServer } from "./fixtures/static-server.js";

let tmp = "";
let server: StaticServer | undefined;
let context: TestContext;
const profile = new Profile();
const problems: string[] = [];

const eventually = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

async function tab(origin: string): Promise<TestPage> {
  const page = await context.newPage();
  page.onPageError((message) => problems.push(`page error: ${message}`));
  page.onRequestFailed((request) => {
    if (!request.aborted) problems.push(`request failed: ${request.url} (${request.errorText})`);
  });
  page.onResponse((response) => {
    if (response.status >= 400) problems.push(`HTTP ${response.status}: ${response.url}`);
  });
  await page.goto(origin + "/");
  await page.waitForFunction(() => {
    const status = document.querySelector("#status")?.textContent;
    return status !== undefined && status !== "Opening…";
  });
  expect(await page.text("#status")).toBe("Ready");
  return page;
}

async function add(page: TestPage, title: string): Promise<void> {
  await page.fill("#new", title);
  await page.click("#add");
}

const items = (page: TestPage) => page.texts("#todos .title");

describe("examples/sveltekit, installed from npm pack", () => {
  beforeAll(async () => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), "shaledb-sveltekit-")));
    const links = ["@sveltejs/adapter-static", "@sveltejs/kit", "@sveltejs/vite-plugin-svelte", "svelte", "vite"];
    let app: string;
    [app, context] = await Promise.all([
      installLikeAUser(tmp, "sveltekit", links, { vite: "vite/bin/vite.js" }),
      profile.launch(),
    ]);
    await run("npm", ["run", "build", "--silent"], { cwd: app, env: childEnv() });
    server = await serveStatic(join(app, "build"), "index.html");
  });

  afterAll(async () => {
    await server?.close();
    await profile.dispose();
    if (tmp !== "") rmSync(tmp, { recursive: true, force: true });
  });

  it("builds with no bundler settings; its live query redraws after writes in this tab and another", async () => {
    const origin = server!.origin;
    const first = await tab(origin);
    expect(await items(first)).toEqual([]);
    await add(first, "Milk");
    await eventually(() => items(first)).toEqual(["Milk"]);

    const second = await tab(origin);
    expect(await items(second)).toEqual(["Milk"]);
    await add(second, "Bread");
    await eventually(() => items(first)).toEqual(["Milk", "Bread"]);
    await first.click({ selector: "button", hasText: "Done", within: { selector: "li", hasText: "Milk" } });
    await eventually(() => items(second)).toEqual(["Bread"]);
    expect(await second.text("#count")).toBe("1 to do");

    await second.close();
    await first.reload();
    await first.waitForFunction(() => document.querySelector("#status")?.textContent === "Ready");
    expect(await items(first)).toEqual(["Bread"]);
    expect(problems).toEqual([]);
  });
});
