// A worker that answers every message at once: the floor of one page<->worker round trip, for
// the run's log (any engine living in a worker pays at least this per awaited call).
onmessage = (e) => postMessage(e.data);
