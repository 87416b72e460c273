// desktop-memory companion: small pure helpers shared by the background script and the popup (a classic
// script: Firefox loads it before background.js, Chromium's service worker with importScripts, the popup
// with a <script> tag, node's tests with require).
(function (root) {
  "use strict";

  const HOST_NAME = "org.desktop_memory.companion";
  const RECENT_MAX = 20;
  const QUEUE_MAX = 200;
  const QUEUE_BYTES = 4 * 1024 * 1024;
  const UNREACHABLE = "desktop-memory is not reachable: run `desktop-memory setup-browser`";
  const CHANGED = "capture paused on this site: the page changed";
  const SITES = {
    "chatgpt.com": "ChatGPT",
    "chat.openai.com": "ChatGPT",
    "claude.ai": "Claude",
    "gemini.google.com": "Gemini",
  };

  // The site a URL belongs to, as the settings and the health name it ("chatgpt.com", ...), or its host.
  function siteOf(url) {
    let host = "";
    try {
      host = new URL(url).hostname;
    } catch (e) { // not a URL (about:blank, a new tab): no site
      return "";
    }
    return host === "chat.openai.com" ? "chatgpt.com" : host;
  }

  function isAssistantSite(site) {
    return Object.prototype.hasOwnProperty.call(SITES, site);
  }

  // The last captures, newest first, without their texts.
  function addRecent(recent, entry) {
    const kept = {
      status: String(entry.status || ""),
      message: String(entry.message || ""),
      title: String(entry.title || "").slice(0, 200),
      site: String(entry.site || ""),
      kind: String(entry.kind || ""),
      at: Number(entry.at || Date.now() / 1000),
    };
    return [kept].concat(recent || []).slice(0, RECENT_MAX);
  }

  // Captures waiting for the host, oldest first; bounded by count and size (the oldest go first).
  function enqueue(queue, capture) {
    const next = (queue || []).concat([capture]);
    while (next.length > QUEUE_MAX) next.shift();
    while (next.length > 1 && JSON.stringify(next).length > QUEUE_BYTES) next.shift();
    return next;
  }

  // The action badge: "!" when the host cannot be reached or capture is paused on a site because the page
  // changed; the tooltip says which.
  function badge(host, health, settings) {
    const sites = (settings && settings.sites) || {};
    const changed = Object.keys(health || {}).filter((s) => health[s].state === "changed" && sites[s] !== false);
    if (host && host.reachable === false) return { text: "!", title: UNREACHABLE };
    if (changed.length) return { text: "!", title: `${CHANGED} (${changed.join(", ")})` };
    if (settings && settings.paused) return { text: "||", title: "desktop-memory: capture paused" };
    return { text: "", title: "desktop-memory" };
  }

  // "3 min ago", "yesterday", or a date: for the popup's lists.
  function ago(when, now) {
    const t = typeof when === "number" ? when * 1000 : Date.parse(when);
    if (!Number.isFinite(t)) return "";
    const s = Math.max(0, ((now ?? Date.now()) - t) / 1000);
    if (s < 60) return "just now";
    if (s < 3600) return `${Math.floor(s / 60)} min ago`;
    if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
    if (s < 172800) return "yesterday";
    if (s < 7 * 86400) return `${Math.floor(s / 86400)} days ago`;
    return new Date(t).toISOString().slice(0, 10);
  }

  // Readable text of a page, whitespace tidied (the page-side part runs in the page: see pageText below).
  function tidyPage(text) {
    return String(text || "")
      .replace(/\r\n?/g, "\n")
      .replace(/\u00a0/g, " ")
      .split("\n")
      .map((l) => l.replace(/[ \t]+/g, " ").trim())
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  }

  // Runs inside the page (chrome.scripting.executeScript: it must not use anything outside itself).
  function pageText() {
    const pick = document.querySelector("article") || document.querySelector("main") || document.body;
    if (!pick) return { text: "", title: document.title };
    const copy = pick.cloneNode(true);
    copy.querySelectorAll("nav, header, footer, aside, script, style, noscript, template, svg, form, button")
      .forEach((el) => el.remove());
    // innerText needs layout: measure the cleaned copy off-screen
    const box = document.createElement("div");
    box.style.cssText = "position:fixed;left:-99999px;top:0;width:800px;white-space:normal";
    box.appendChild(copy);
    document.documentElement.appendChild(box);
    const text = box.innerText;
    box.remove();
    return { text, title: document.title };
  }

  function selectionText() {
    return String(getSelection ? getSelection().toString() : "");
  }

  const DMCommon = { HOST_NAME, RECENT_MAX, QUEUE_MAX, UNREACHABLE, CHANGED, SITES, siteOf, isAssistantSite,
    addRecent, enqueue, badge, ago, tidyPage, pageText, selectionText };
  root.DMCommon = DMCommon;
  if (typeof module === "object" && module.exports) module.exports = DMCommon;
})(globalThis);
