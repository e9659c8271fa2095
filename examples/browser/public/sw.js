// The notes app's service worker: it keeps a copy of every file the app loads from its own
// origin (the page, the scripts, the database's worker and WebAssembly module, the icons) so that
// the app opens without a network. Network first, so that a new version is picked up as soon as
// the network is there; the copy when the network fails. Only GET requests of this origin.
const CACHE = "notes-app-v1";
const SHELL = ["./", "./manifest.webmanifest", "./icon-192.png", "./icon-512.png"];

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((name) => name !== CACHE).map((name) => caches.delete(name))))
      .then(() => self.clients.claim()),
  );
});

// The page sends the files it loaded before this worker controlled it (the first visit).
self.addEventListener("message", (event) => {
  const urls = Array.isArray(event.data?.cache) ? event.data.cache : [];
  const mine = urls.filter((url) => typeof url === "string" && new URL(url).origin === self.location.origin);
  event.waitUntil(caches.open(CACHE).then((cache) => Promise.all(mine.map((url) => cache.add(url).catch(() => undefined)))));
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        const response = await fetch(request);
        if (response.ok) await cache.put(request, response.clone());
        return response;
      } catch (error) {
        const copy = (await cache.match(request, { ignoreVary: true, ignoreSearch: request.mode === "navigate" })) ??
          (request.mode === "navigate" ? await cache.match("./") : undefined);
        if (copy !== undefined) return copy;
        throw error;
      }
    })(),
  );
});
