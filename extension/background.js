// desktop-memory companion: the background script (Chromium: a service worker; Firefox: an event page).
// One native-messaging port to the host (org.desktop_memory.companion), requests matched to replies by id.
// Captures that cannot reach the host wait in chrome.storage.session (bounded; in memory, never on disk: they hold
// the texts before the engine redacts them) and are sent again later; the host's own spool (encrypted) keeps them
// when the host runs but the engine cannot.
// Storage keys (chrome.storage.local):
//   settings: {paused: bool, sites: {"chatgpt.com": bool, ...}}   (a missing site is on)
//   host:     {reachable: bool, version, engine, paused, error, checkedAt}
//   health:   {"chatgpt.com": {state: "ok"|"changed", message, at}}
//   recent:   [{status, message, title, site, kind, at}]            (the last 20 captures, never their texts)
//   queue:    [WebCapture]   in chrome.storage.session, not .local  (waiting for the host)
//   badge:    {text, title}                                         (what the action badge shows)
/* global DMCommon, importScripts */
"use strict";

if (typeof DMCommon === "undefined" && typeof importScripts === "function") importScripts("lib/common.js");

const api = globalThis.browser ?? globalThis.chrome;
const C = globalThis.DMCommon;
const TIMEOUT_MS = { hello: 15000, status: 15000, capture: 30000, search: 15000, context: 20000 };

let port = null;
let nextId = 1;
const waiting = new Map(); // id -> {resolve, reject, timer}
let retryMs = 1000;
let retryTimer = null;

function browserName() {
  const ua = navigator.userAgent || "";
  if (/Firefox\//.test(ua)) return "Firefox";
  if (/Edg\//.test(ua)) return "Edge";
  return "Chromium";
}

async function load(keys) {
  return api.storage.local.get(keys);
}

// The queue: the browser session's memory (storage.session), never the profile's disk.
const memoryQueue = { queue: [] }; // where storage.session is missing
async function loadQueue() {
  if (!api.storage.session) return memoryQueue.queue;
  return (await api.storage.session.get("queue")).queue || [];
}
async function saveQueue(queue) {
  if (!api.storage.session) memoryQueue.queue = queue;
  else await api.storage.session.set({ queue });
}

// Read-modify-write of a storage key, one at a time: two captures answered together would otherwise both read
// the same list and one would be lost (the same for the queue, the health and the settings).
let updates = Promise.resolve();
function serially(fn) {
  const run = updates.then(fn, fn);
  updates = run.catch(() => {});
  return run;
}

async function save(values) {
  await api.storage.local.set(values);
  if ("host" in values || "health" in values || "settings" in values) await updateBadge();
}

async function updateBadge() {
  const { host, health, settings } = await load(["host", "health", "settings"]);
  const b = C.badge(host, health, settings);
  await api.storage.local.set({ badge: b });
  try {
    await api.action.setBadgeText({ text: b.text });
    await api.action.setTitle({ title: b.title });
    if (b.text) await api.action.setBadgeBackgroundColor({ color: b.text === "!" ? "#c62828" : "#616161" });
  } catch (e) { // the action API is missing in a test harness page: the badge is in storage anyway
    console.debug("badge", e);
  }
}

// ---- the native port --------------------------------------------------------------------------------------

function failAll(message) {
  for (const [, w] of waiting) {
    clearTimeout(w.timer);
    w.reject(new Error(message));
  }
  waiting.clear();
}

function connect() {
  if (port) return port;
  try {
    port = api.runtime.connectNative(C.HOST_NAME);
  } catch (e) { // no host manifest, or the permission is missing: the same as a disconnect
    port = null;
    hostGone(String(e && e.message ? e.message : e));
    return null;
  }
  port.onMessage.addListener((reply) => {
    const w = reply && waiting.get(reply.id);
    if (!w) return;
    waiting.delete(reply.id);
    clearTimeout(w.timer);
    w.resolve(reply);
  });
  port.onDisconnect.addListener((p) => {
    const error = (p && p.error && p.error.message) || (api.runtime.lastError && api.runtime.lastError.message) || "";
    port = null;
    hostGone(error);
  });
  return port;
}

function hostGone(error) {
  failAll(C.UNREACHABLE);
  save({ host: { reachable: false, error: String(error || "").slice(0, 300), checkedAt: Date.now() / 1000 } });
  if (retryTimer === null) {
    retryTimer = setTimeout(() => {
      retryTimer = null;
      hello().catch(() => {}); // the failure is recorded by hostGone
    }, retryMs);
    retryMs = Math.min(retryMs * 2, 60000);
  }
}

function request(type, fields) {
  return new Promise((resolve, reject) => {
    const p = connect();
    if (!p) return reject(new Error(C.UNREACHABLE));
    const id = nextId++;
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error(`desktop-memory did not answer (${type})`));
    }, TIMEOUT_MS[type] || 15000);
    waiting.set(id, { resolve, reject, timer });
    try {
      p.postMessage(Object.assign({ id, type }, fields || {}));
    } catch (e) { // the port closed between connect and post
      waiting.delete(id);
      clearTimeout(timer);
      reject(new Error(C.UNREACHABLE));
    }
  });
}

async function hello() {
  const reply = await request("hello");
  if (!reply.ok) throw new Error(reply.error || "desktop-memory refused the request");
  retryMs = 1000;
  await save({ host: { reachable: true, version: reply.version || "", engine: reply.engine || "",
    paused: Boolean(reply.paused), error: "", checkedAt: Date.now() / 1000 } });
  flushQueue();
  return reply;
}

// ---- captures -----------------------------------------------------------------------------------------------

function remember(entry) {
  return serially(async () => {
    const { recent } = await load("recent");
    await api.storage.local.set({ recent: C.addRecent(recent, entry) });
  });
}

// Send one capture; when the host cannot be reached it waits in the queue. Returns what the person is told.
async function capture(cap, { queued = false } = {}) {
  const label = { title: cap.title || cap.url, site: cap.site, kind: cap.kind };
  try {
    const reply = await request("capture", { capture: cap });
    const status = reply.ok ? reply.status : "error";
    const message = reply.ok ? reply.message || status : reply.error || "refused";
    await remember(Object.assign({ status, message }, label));
    return { accepted: true, ok: Boolean(reply.ok), status, message };
  } catch (e) { // unreachable or no answer: keep it for later
    if (queued) throw e;
    await serially(async () => {
      await saveQueue(C.enqueue(await loadQueue(), cap));
    });
    const message = "kept here until desktop-memory can be reached";
    await remember(Object.assign({ status: "queued", message }, label));
    return { accepted: true, ok: false, status: "queued", message };
  }
}

let flushing = false;
async function flushQueue() {
  if (flushing) return;
  flushing = true;
  try {
    for (;;) {
      const queue = await loadQueue();
      if (!queue.length) return;
      try {
        await capture(queue[0], { queued: true });
      } catch (e) { // still unreachable: try again at the next hello
        return;
      }
      await serially(async () => {
        await saveQueue((await loadQueue()).slice(1));
      });
    }
  } finally {
    flushing = false;
  }
}

async function settings() {
  const { settings: s } = await load("settings");
  return Object.assign({ paused: false, sites: {} }, s || {});
}

async function allowed(site, kind) {
  const s = await settings();
  if (kind === "exchange") return !s.paused && s.sites[site] !== false;
  return true; // "Remember selection/page" is the person's own request: pause is for automatic capture
}

// ---- messages from the content scripts and the popup ----------------------------------------------------------

async function onMessage(message, sender) {
  const tab = sender && sender.tab;
  switch (message && message.type) {
    case "dm-capture": {
      if (!tab || tab.incognito) return { accepted: true, ok: false, status: "skipped", message: "private window" };
      const cap = Object.assign({}, message.capture, { private: false, browser: browserName() });
      if (!(await allowed(cap.site, cap.kind))) return { accepted: true, ok: false, status: "skipped",
        message: "capture is off" };
      return capture(cap);
    }
    case "dm-health":
      return serially(async () => {
        const { health } = await load("health");
        const next = Object.assign({}, health || {});
        next[message.site] = { state: message.state === "changed" ? "changed" : "ok",
          message: message.state === "changed" ? C.CHANGED : "", at: Date.now() / 1000 };
        await save({ health: next });
        return { ok: true };
      });
    case "dm-status": {
      try {
        await hello();
      } catch (e) { // unreachable: the stored host state says so
        console.debug("hello", e);
      }
      const got = await load(["host", "health", "recent", "settings", "badge"]);
      return { host: got.host || { reachable: false }, health: got.health || {}, recent: got.recent || [],
        settings: Object.assign({ paused: false, sites: {} }, got.settings || {}),
        queued: (await loadQueue()).length, badge: got.badge || { text: "", title: "" } };
    }
    case "dm-settings":
      return serially(async () => {
        const s = await settings();
        if (typeof message.paused === "boolean") s.paused = message.paused;
        if (message.site) s.sites = Object.assign({}, s.sites, { [message.site]: Boolean(message.enabled) });
        await save({ settings: s });
        return { ok: true, settings: s };
      });
    case "dm-search":
    case "dm-context": {
      const type = message.type.slice(3);
      const fields = type === "search"
        ? { query: String(message.query || ""), limit: message.limit || 8 }
        : { ids: message.ids || [], query: message.query ?? null };
      try {
        return await request(type, fields);
      } catch (e) { // unreachable: the popup shows the one-line reason
        return { ok: false, error: String(e.message || e) };
      }
    }
    default:
      return undefined;
  }
}

api.runtime.onMessage.addListener((message, sender, sendResponse) => {
  const done = onMessage(message, sender);
  if (!done) return false;
  done.then((r) => {
    if (r !== undefined) sendResponse(r);
  }, (e) => sendResponse({ ok: false, error: String(e && e.message ? e.message : e) }));
  return true; // the reply comes later
});

// ---- context menus ---------------------------------------------------------------------------------------------

function makeMenus() {
  api.contextMenus.removeAll(() => {
    void api.runtime.lastError;
    api.contextMenus.create({ id: "dm-selection", title: "Remember selection", contexts: ["selection"] });
    api.contextMenus.create({ id: "dm-page", title: "Remember this page", contexts: ["page"] });
  });
}

async function inPage(tab, func) {
  try {
    const [result] = await api.scripting.executeScript({ target: { tabId: tab.id }, func });
    return result ? result.result : null;
  } catch (e) { // a page scripts cannot run in (the web store, about: pages): use what the menu gave
    console.debug("executeScript", e);
    return null;
  }
}

async function rememberFromMenu(info, tab) {
  if (!tab || tab.incognito) return; // private windows are never captured
  const url = info.pageUrl || tab.url || "";
  const base = { site: C.siteOf(url), app: "", url, title: tab.title || "", conversation: "", turn: "",
    prompt: "", answer: "", at: Date.now() / 1000, private: false, browser: browserName() };
  if (info.menuItemId === "dm-selection") {
    const text = (await inPage(tab, C.selectionText)) || info.selectionText || "";
    if (!text.trim()) return;
    await capture(Object.assign(base, { kind: "selection", text: text.trim() }));
  } else if (info.menuItemId === "dm-page") {
    const got = await inPage(tab, C.pageText);
    const text = C.tidyPage(got && got.text);
    if (!text) {
      await remember({ status: "skipped", message: "no readable text on this page", title: base.title,
        site: base.site, kind: "page" });
      return;
    }
    await capture(Object.assign(base, { kind: "page", text, title: (got && got.title) || base.title }));
  }
}

api.contextMenus.onClicked.addListener((info, tab) => {
  rememberFromMenu(info, tab).catch((e) => console.debug("remember", e));
});

api.runtime.onInstalled.addListener(makeMenus);
api.runtime.onStartup.addListener(() => hello().catch(() => {}));
updateBadge().catch(() => {});
hello().catch(() => {}); // unreachable: recorded in storage, retried with a back-off
