//! WebAssembly bindings of the ShaleDB engine. TODO(wasm): implement.
