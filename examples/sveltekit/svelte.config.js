// A client-only app: the static adapter writes plain files, and `fallback` makes index.html the
// page for every path (the app renders in the browser: src/routes/+layout.js turns SSR off, as
// ShaleDB needs the browser's OPFS, Web Locks and workers).
import adapter from "@sveltejs/adapter-static";

export default {
  kit: { adapter: adapter({ fallback: "index.html" }) },
};
