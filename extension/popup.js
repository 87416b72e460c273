// desktop-memory companion: the toolbar popup. Search as you type (the host's `search`), Enter or a click
// puts the pasteable context (the host's `context`) into this tab's chat input, or on the clipboard on
// other sites; this site's capture on/off, pause all, the last captures and the host's state.
// `popup.html?tab=<id>` works on that tab instead of the active one (for tests that open the popup as a page).
/* global DMCommon */
"use strict";

const api = globalThis.browser ?? globalThis.chrome;
const C = DMCommon;
const $ = (id) => document.getElementById(id);

let tab = null;
let site = "";
let hits = [];
let picked = -1;
let searchTimer = null;
let searchSeq = 0;

function ask(message) {
  return new Promise((resolve) => {
    const p = api.runtime.sendMessage(message, (reply) => {
      void api.runtime.lastError;
      resolve(reply || { ok: false, error: C.UNREACHABLE });
    });
    if (p && typeof p.then === "function") p.then((r) => resolve(r || { ok: false, error: C.UNREACHABLE }),
      (e) => resolve({ ok: false, error: String(e && e.message ? e.message : e) }));
  });
}

async function findTab() {
  const wanted = Number(new URLSearchParams(location.search).get("tab"));
  if (wanted) return api.tabs.get(wanted);
  const [active] = await api.tabs.query({ active: true, currentWindow: true });
  return active || null;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function showHost(host) {
  const box = $("host");
  if (host && host.reachable === false) {
    box.replaceChildren("desktop-memory is not reachable: run ", el("code", "", "desktop-memory setup-browser"));
    box.hidden = false;
  } else if (host && host.engine === "offline") {
    box.textContent = "desktop-memory is not running: captures are kept until it starts.";
    box.className = "notice warn";
    box.hidden = false;
  } else {
    box.hidden = true;
  }
}

function showRecent(recent) {
  const list = $("recent");
  list.replaceChildren(...(recent || []).map((r) => {
    const li = el("li");
    li.append(el("span", `status ${r.status}`, r.status), el("span", "what", r.title || r.site || r.kind),
      el("span", "when", C.ago(r.at)));
    li.title = r.message || "";
    return li;
  }));
  $("noRecent").hidden = Boolean(recent && recent.length);
}

async function refresh() {
  const state = await ask({ type: "dm-status" });
  showHost(state.host);
  showRecent(state.recent);
  const settings = state.settings || { paused: false, sites: {} };
  $("pauseAll").checked = Boolean(settings.paused);
  const assistant = C.isAssistantSite(site);
  $("siteOn").disabled = !assistant;
  $("siteOn").checked = assistant && settings.sites[site] !== false;
  $("siteLabel").textContent = assistant ? `Capture on ${site}` : "Capture works on ChatGPT, Claude and Gemini";
  const h = (state.health || {})[site];
  $("changed").textContent = C.CHANGED;
  $("changed").hidden = !(assistant && h && h.state === "changed");
}

function render() {
  const list = $("results");
  list.replaceChildren(...hits.map((hit, i) => {
    const li = el("li");
    li.id = `hit-${i}`;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", String(i === picked));
    const head = el("div", "title");
    head.append(el("span", "", hit.title || hit.source_app || "Memory"), el("span", "when", C.ago(hit.when)));
    li.append(head, el("div", "snippet", hit.snippet || ""));
    li.addEventListener("click", () => use(i));
    return li;
  }));
  $("query").setAttribute("aria-activedescendant", picked >= 0 ? `hit-${picked}` : "");
  if (picked >= 0) $(`hit-${picked}`).scrollIntoView({ block: "nearest" });
}

async function search() {
  const query = $("query").value.trim();
  const seq = ++searchSeq;
  if (!query) {
    hits = [];
    picked = -1;
    $("searchState").textContent = "";
    return render();
  }
  const reply = await ask({ type: "dm-search", query, limit: 8 });
  if (seq !== searchSeq) return; // a newer search is under way
  hits = reply.ok ? reply.hits || [] : [];
  picked = hits.length ? 0 : -1;
  $("searchState").textContent = reply.ok ? (hits.length ? "" : "No memories match.") : reply.error;
  render();
}

async function use(i) {
  const hit = hits[i];
  if (!hit) return;
  const reply = await ask({ type: "dm-context", ids: [hit.id], query: $("query").value.trim() || null });
  if (!reply.ok) {
    $("searchState").textContent = reply.error;
    return;
  }
  let inserted = false;
  if (tab && C.isAssistantSite(site)) {
    try {
      const r = await api.tabs.sendMessage(tab.id, { type: "dm-insert", text: reply.text });
      inserted = Boolean(r && r.ok);
    } catch (e) { // no content script in that tab (loaded before the extension): copy instead
      inserted = false;
    }
  }
  if (inserted) {
    $("searchState").textContent = "Put into the chat's input box.";
    if (!new URLSearchParams(location.search).get("tab")) window.close();
    return;
  }
  try {
    await navigator.clipboard.writeText(reply.text);
    $("searchState").textContent = "Copied: paste it where you need it.";
  } catch (e) { // the clipboard refused (no focus)
    $("searchState").textContent = "Could not copy the memory.";
  }
}

$("query").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(search, 200);
});
$("query").addEventListener("keydown", (event) => {
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    if (!hits.length) return;
    event.preventDefault();
    picked = (picked + (event.key === "ArrowDown" ? 1 : -1) + hits.length) % hits.length;
    render();
  } else if (event.key === "Enter") {
    event.preventDefault();
    if (picked >= 0) use(picked);
  } else if (event.key === "Escape" && $("query").value) {
    event.preventDefault();
    $("query").value = "";
    search();
  }
});
$("siteOn").addEventListener("change", async () => {
  await ask({ type: "dm-settings", site, enabled: $("siteOn").checked });
  refresh();
});
$("pauseAll").addEventListener("change", async () => {
  await ask({ type: "dm-settings", paused: $("pauseAll").checked });
  refresh();
});

(async () => {
  try {
    tab = await findTab();
  } catch (e) { // the tab is gone: act as on another site
    tab = null;
  }
  site = tab ? C.siteOf(tab.url || "") : "";
  $("query").focus();
  await refresh();
})();
