// A dedicated worker of "the application" for the openInWorker tests: it imports the package as
// an application's worker would, and runs the bodies the test page posts to it, each an async
// function of (shaledb, state) whose result (or error { code, message }) it posts back.
import * as shaledb from "/dist/browser.js";

const state = {};
self.onmessage = async (event) => {
  const { id, body } = event.data;
  try {
    const run = new Function("shaledb", "state", `return (async () => { ${body} })();`);
    self.postMessage({ id, ok: true, value: await run(shaledb, state) });
  } catch (error) {
    self.postMessage({ id, ok: false, error: { code: error?.code, message: String(error?.message ?? error) } });
  }
};
self.postMessage({ ready: true });
