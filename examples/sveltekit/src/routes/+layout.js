// Client-only: ShaleDB runs where OPFS, Web Locks and workers are, so nothing renders on a server.
export const ssr = false;
