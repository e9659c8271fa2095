// The page: a form, a list, search, storage figures, backup and restore. The database calls are
// in notes.ts; this file wires them to the DOM and shows errors.
import { ShaleError } from "shaledb";

import { NotesStore, type StoredNote } from "./notes.ts";

/** How many notes the list shows. */
const LIMIT = 100;

const $ = <T extends HTMLElement>(selector: string) => document.querySelector<T>(selector)!;
const status = $("#status");
const errorBox = $("#error");
const addForm = $<HTMLFormElement>("#add-form");
const titleInput = $<HTMLInputElement>("#title");
const bodyInput = $<HTMLTextAreaElement>("#body");
const searchInput = $<HTMLInputElement>("#search");
const summary = $("#summary");
const list = $<HTMLUListElement>("#notes");
const statsList = $("#stats");
const exportButton = $<HTMLButtonElement>("#export");
const importInput = $<HTMLInputElement>("#import");
const emptyState = $("#empty");
const undoBar = $("#undo");
const undoText = $("#undo-text");
const undoButton = $<HTMLButtonElement>("#undo-button");

/**
 * What to tell the user about an error: what happened and what to do, in their words. The
 * database's own error code and message are for the developer (the console), not the page.
 */
function describeError(error: unknown): string {
  if (!(error instanceof ShaleError)) {
    return "Something went wrong. Reload the page and try again.";
  }
  const advice: Partial<Record<ShaleError["code"], string>> = {
    QUOTA: "This browser has no room left for this site: delete some notes, or free disk space.",
    LOCKED: "The notes are open in another tab: close the other tabs of this page, then try again.",
    CLOSED: "The notes were closed: reload the page.",
    INVALID_ARGUMENT: "Not accepted: not a backup file of these notes, or a note too large.",
    CORRUPTION: "This backup file is damaged: your notes were left as they were.",
    IO: "This browser cannot store the notes (it needs a recent browser, over https).",
  };
  return advice[error.code] ?? "That did not work. Reload the page and try again.";
}

function showError(error: unknown): void {
  console.warn(error); // the details, for the developer
  errorBox.textContent = describeError(error);
  errorBox.hidden = false;
}

/** Runs one user action: clears the last error, shows the next one. */
async function run(action: () => Promise<void>): Promise<void> {
  errorBox.hidden = true;
  try {
    await action();
  } catch (error) {
    showError(error);
  }
}

/** One `<li>` per note. textContent, never innerHTML: titles and bodies are user input. */
function noteItem(note: StoredNote, onDelete: () => void): HTMLLIElement {
  const item = document.createElement("li");
  const title = document.createElement("h3");
  title.textContent = note.title;
  const time = document.createElement("time");
  time.dateTime = note.created;
  time.textContent = new Date(note.created).toLocaleString();
  const body = document.createElement("p");
  body.textContent = note.body;
  const remove = document.createElement("button");
  remove.type = "button";
  remove.textContent = "Delete";
  remove.addEventListener("click", onDelete);
  item.append(title, time, body, remove);
  return item;
}

function setStats(entries: [string, string][]): void {
  statsList.replaceChildren(
    ...entries.flatMap(([label, value]) => {
      const dt = document.createElement("dt");
      dt.textContent = label;
      const dd = document.createElement("dd");
      dd.textContent = value;
      return [dt, dd];
    }),
  );
}

async function main(): Promise<void> {
  let notes: NotesStore;
  try {
    notes = await NotesStore.open();
  } catch (error) {
    status.textContent = "The database could not be opened.";
    showError(error);
    return;
  }

  // Other tabs of this page show the same database: every commit to the notes, made in this tab
  // or another, redraws the list (`db.watch()` on the notes' keys: `NotesStore.watch`). Commits
  // that come together redraw once; a redraw of its own accord leaves an error shown as it is.
  let redrawQueued = false;
  const redrawSoon = () => {
    if (redrawQueued) return;
    redrawQueued = true;
    setTimeout(() => {
      redrawQueued = false;
      refresh().catch(showError);
    }, 0);
  };
  void notes.watch(redrawSoon, new AbortController().signal);

  // Typing in the search box starts a refresh per key; only the latest one may draw.
  let generation = 0;

  /** Redraws the list (newest first, or the search results) and the storage figures. */
  async function refresh(): Promise<void> {
    const mine = ++generation;
    const query = searchInput.value.trim();
    const [shown, count, stats] = await Promise.all([
      query === "" ? notes.newest(LIMIT) : notes.searchByTitle(query, LIMIT),
      notes.count(),
      notes.stats(),
    ]);
    if (mine !== generation) return;

    list.replaceChildren(...shown.map((note) => noteItem(note, () => void run(() => remove(note)))));
    emptyState.hidden = !(count === 0 && query === "");
    const notesText = (n: number) => `${n} note${n === 1 ? "" : "s"}`;
    summary.textContent =
      query !== ""
        ? `${notesText(shown.length)} with a title starting with “${query}”`
        : count > shown.length
          ? `${notesText(count)}, the ${shown.length} newest shown`
          : notesText(count);
    setStats([
      ["Notes", String(count)],
      ["Kept for good", stats.persisted ? "yes" : "no: the browser may clear them when short of space"],
    ]);
  }

  /** The last deleted note, until it is undone or the next delete. */
  let lastDeleted: StoredNote | undefined;

  async function remove(note: StoredNote): Promise<void> {
    await notes.remove(note.key);
    lastDeleted = note;
    undoText.textContent = `Deleted “${note.title}”.`;
    undoBar.hidden = false;
    await refresh();
  }

  undoButton.addEventListener("click", () =>
    void run(async () => {
      const note = lastDeleted;
      if (note === undefined) return;
      lastDeleted = undefined;
      undoBar.hidden = true;
      await notes.restore(note); // the same key: back in its place in the list
      await refresh();
    }),
  );

  addForm.addEventListener("submit", (event) => {
    event.preventDefault();
    void run(async () => {
      await notes.add(titleInput.value.trim(), bodyInput.value);
      addForm.reset();
      titleInput.focus();
      await refresh();
    });
  });

  searchInput.addEventListener("input", () => void run(refresh));

  exportButton.addEventListener("click", () =>
    void run(async () => {
      const archive = await notes.export(); // a Blob: a plain tar of the database's files
      const url = URL.createObjectURL(archive);
      const link = document.createElement("a");
      link.href = url;
      link.download = `notes-${new Date().toISOString().slice(0, 10)}.tar`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    }),
  );

  importInput.addEventListener("change", () => {
    const file = importInput.files?.[0];
    importInput.value = ""; // so that choosing the same file again fires "change" again
    if (file === undefined) return;
    void run(async () => {
      if (!confirm(`Replace all notes with those in ${file.name}?`)) return;
      try {
        await notes.importArchive(file);
      } finally {
        await refresh(); // the old notes if the import failed, the restored ones if not
      }
    });
  });

  await run(refresh);
  for (const control of [$<HTMLButtonElement>("#add"), exportButton, importInput]) {
    control.disabled = false;
  }
  status.textContent = "Ready: the notes are stored in this browser.";
}

/**
 * Makes the app work offline and installable: a service worker keeps a copy of what the app
 * loads (public/sw.js). Only in the built app: Vite's dev server serves modules that change.
 * On the first visit the page loaded its files before the service worker ran: it sends their
 * addresses, to be kept too.
 */
async function workOffline(): Promise<void> {
  if (!import.meta.env.PROD || !("serviceWorker" in navigator)) return;
  await navigator.serviceWorker.register("/sw.js");
  const registration = await navigator.serviceWorker.ready;
  const loaded = performance.getEntriesByType("resource").map((entry) => entry.name);
  registration.active?.postMessage({ cache: [location.href, ...loaded] });
}

void main();
workOffline().catch((error: unknown) => console.warn("offline use is not available:", error));
