// SvelteKit's Vite plugin and nothing else: ShaleDB needs no bundler settings (its worker and
// WebAssembly module are `new URL(..., import.meta.url)` assets, which Vite emits).
import { sveltekit } from "@sveltejs/kit/vite";
import { defineConfig } from "vite";

export default defineConfig({ plugins: [sveltekit()] });
