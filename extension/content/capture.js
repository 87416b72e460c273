// desktop-memory companion: the capture engine shared by the site adapters (a classic content script).
//
// An adapter (content/<site>.js) says how to read one site's conversation page; this file watches the page
// and decides what to send. An exchange is sent only when its answer is final (no streaming indicator and
// the text unchanged for FINAL_MS), never twice with the same text, and again when the answer changed later
// (a regenerated or edited answer: the engine keeps the earlier one as a version). When the adapter cannot
// read a conversation page for BROKEN_MS, capture pauses on this site and says so (nothing is sent).
//
// The pure parts (textOf, tidy, planScan, digest) are exported for node's test runner.
(function (root) {
  "use strict";

  const FINAL_MS = 1500; // an answer's text must stay the same this long after streaming ended
  const BROKEN_MS = 6000; // a conversation page the adapter cannot read for this long: capture pauses
  const DEBOUNCE_MS = 300;
  const TICK_MS = 500;
  const CHANGED_MESSAGE = "capture paused on this site: the page changed";

  // ---- reading text out of the page ------------------------------------------------------------------------

  const SKIP = new Set(["BUTTON", "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "svg", "TEXTAREA", "INPUT",
    "SELECT", "OPTION", "IMG", "VIDEO", "AUDIO", "CANVAS", "IFRAME", "MAT-ICON"]);
  const PARAGRAPH = new Set(["P", "H1", "H2", "H3", "H4", "H5", "H6", "UL", "OL", "TABLE", "BLOCKQUOTE", "HR",
    "FIGURE", "DL", "SECTION", "ARTICLE"]);
  const LINE = new Set(["DIV", "LI", "TR", "DT", "DD", "HEADER", "FOOTER", "MAIN", "NAV", "ASIDE", "FORM",
    "FIELDSET", "DETAILS", "SUMMARY", "CAPTION", "THEAD", "TBODY", "TFOOT"]);

  function tag(node) {
    return String(node.tagName || node.nodeName || "").toUpperCase();
  }

  function attr(node, name) {
    return typeof node.getAttribute === "function" ? node.getAttribute(name) : null;
  }

  function classes(node) {
    const c = attr(node, "class");
    return c ? c.split(/\s+/) : [];
  }

  // Elements a person does not read as part of a message: controls, screen-reader labels, hidden parts.
  function skipped(node, isHidden) {
    const t = tag(node);
    if (SKIP.has(t)) return true;
    if (attr(node, "aria-hidden") === "true" || attr(node, "hidden") !== null) return true;
    if (attr(node, "role") === "button" || attr(node, "data-dm-skip") !== null) return true;
    const cls = classes(node);
    if (cls.includes("sr-only") || cls.includes("cdk-visually-hidden")) return true;
    return Boolean(isHidden && isHidden(node));
  }

  function codeText(pre) {
    const code = typeof pre.querySelector === "function" ? pre.querySelector("code") : null;
    const body = (code || pre).textContent || "";
    const lang = code ? (classes(code).find((c) => c.startsWith("language-")) || "").slice(9) : "";
    return "```" + lang + "\n" + body.replace(/\n+$/, "") + "\n```";
  }

  // The readable text of an element: paragraphs and code blocks keep their line breaks, controls (copy
  // buttons, "Copy code") and screen-reader labels are left out. Works on any DOM-like tree (nodeType,
  // tagName, childNodes, textContent, getAttribute), so node's tests can feed it plain objects.
  function keepsSpaceByClass(el) {
    return classes(el).some((c) => c.startsWith("whitespace-pre") || c === "whitespace-break-spaces");
  }

  function textOf(node, options) {
    const isHidden = options && options.isHidden;
    const keepsSpace = (options && options.keepsSpace) || keepsSpaceByClass;
    const out = [];
    const brk = (n) => out.push(n);
    (function walk(n, pre) {
      if (n.nodeType === 3) {
        const raw = String(n.nodeValue ?? n.textContent ?? "");
        return out.push(pre ? { raw } : raw.replace(/\s+/g, " "));
      }
      if (n.nodeType !== 1 && n.nodeType !== 9 && n.nodeType !== 11) return;
      if (n.nodeType === 1 && skipped(n, isHidden)) return;
      const t = tag(n);
      if (t === "BR") return brk(1);
      if (t === "PRE") {
        brk(2);
        out.push({ raw: codeText(n) });
        return brk(2);
      }
      const size = PARAGRAPH.has(t) ? 2 : LINE.has(t) ? 1 : 0;
      if (size) brk(size);
      if (t === "LI") out.push("- ");
      if (t === "TD" || t === "TH") out.push(" | ");
      const keep = pre || (n.nodeType === 1 && keepsSpace(n));
      for (const child of Array.from(n.childNodes || [])) walk(child, keep);
      if (size) brk(size);
    })(node, false);
    // join: runs of breaks become the largest of them; spaces next to breaks go
    let text = "";
    let pending = 0;
    for (const piece of out) {
      if (typeof piece === "number") {
        pending = Math.max(pending, piece);
        continue;
      }
      const s = typeof piece === "string" ? piece : piece.raw;
      if (!s) continue;
      if (pending && text) text = text.replace(/[ \t]+$/, "") + "\n".repeat(pending);
      if (pending || !text || text.endsWith("\n")) {
        text += typeof piece === "string" ? s.replace(/^ +/, "") : s;
      } else {
        text += s;
      }
      pending = 0;
    }
    return tidy(text);
  }

  // Whitespace tidied: no trailing spaces, at most one blank line in a row (outside code fences), trimmed.
  function tidy(text) {
    const lines = String(text || "").replace(/\r\n?/g, "\n").replace(/\u00a0/g, " ").split("\n");
    const kept = [];
    let fenced = false;
    let blank = 0;
    for (let line of lines) {
      if (line.trimStart().startsWith("```")) fenced = !fenced;
      if (!fenced) line = line.replace(/[ \t]+$/, "");
      if (!fenced && !line.trim()) {
        blank += 1;
        if (blank > 1) continue;
      } else {
        blank = 0;
      }
      kept.push(line);
    }
    return kept.join("\n").trim();
  }

  // A short fingerprint of what was sent for a turn (kept in the site's sessionStorage instead of the text).
  function digest(text) {
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193;
    const s = String(text);
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 16777619) >>> 0;
      h2 = Math.imul(h2 + c, 2654435761) >>> 0;
    }
    return h1.toString(16).padStart(8, "0") + h2.toString(16).padStart(8, "0") + ":" + s.length;
  }

  // ---- deciding what to send (pure) ----------------------------------------------------------------------

  // state: {brokenSince: ms|null, seen: {turnKey: {answer, since}}}; read: what the adapter found:
  // {conversation, turns: [{key, prompt, answer, streaming}] | null, streaming, hasContent}; sent(key) -> digest
  // or null. Returns {health: "ok"|"changed"|"waiting"|"idle", send: [turn...], again: ms|null}: "waiting"
  // while the page is unreadable but not yet for BROKEN_MS; `again`: when to look again without a mutation.
  function planScan(state, read, now, sent) {
    if (!read.conversation) {
      state.brokenSince = null;
      return { health: "idle", send: [], again: null };
    }
    const turns = read.turns;
    const last = turns ? turns.length - 1 : -1;
    const streamingAt = (t, i) => t.streaming || (read.streaming && i === last);
    // unreadable: no structure found, no turns on a page that shows a conversation, or a finished turn
    // without an answer's text (a 25-byte stub is not a capture)
    const unreadable = turns === null
      || (turns.length === 0 && read.hasContent)
      || turns.some((t, i) => !t.answer && !streamingAt(t, i));
    if (unreadable) {
      if (state.brokenSince === null) state.brokenSince = now;
      if (now - state.brokenSince >= BROKEN_MS) return { health: "changed", send: [], again: null };
      return { health: "waiting", send: [], again: state.brokenSince + BROKEN_MS - now };
    }
    state.brokenSince = null;
    const send = [];
    let again = null;
    const wait = (ms) => {
      again = again === null ? ms : Math.min(again, ms);
    };
    turns.forEach((turn, i) => {
      const streaming = streamingAt(turn, i);
      const seenKey = read.conversation + "\u0000" + turn.key;
      const seen = state.seen[seenKey];
      if (!seen || seen.answer !== turn.answer || streaming) {
        state.seen[seenKey] = { answer: turn.answer, since: now };
        if (turn.answer) wait(FINAL_MS);
        return;
      }
      if (!turn.answer) return;
      if (now - seen.since < FINAL_MS) return wait(seen.since + FINAL_MS - now);
      const print = digest(turn.prompt + "\u0000" + turn.answer);
      if (sent(read.conversation, turn.key) === print) return;
      send.push(Object.assign({}, turn, { digest: print }));
    });
    return { health: "ok", send, again };
  }

  // ---- in the page ---------------------------------------------------------------------------------------

  const api = root.browser ?? root.chrome;

  function keepsSpaceInPage(el) {
    if (!root.getComputedStyle) return keepsSpaceByClass(el);
    const ws = root.getComputedStyle(el).whiteSpace || "";
    return ws.startsWith("pre") || ws === "break-spaces";
  }

  function isHiddenInPage(el) {
    if (!root.getComputedStyle) return false;
    const style = root.getComputedStyle(el);
    return style.display === "none" || style.visibility === "hidden";
  }

  // `skip`: a selector for the adapter's own controls inside a message (e.g. a code block's header)
  function readText(el, skip) {
    if (!el) return "";
    if (typeof el === "string") return tidy(el);
    const isHidden = (n) => Boolean(skip && n.matches && n.matches(skip)) || isHiddenInPage(n);
    return textOf(el, { isHidden, keepsSpace: keepsSpaceInPage });
  }

  function browserName() {
    const ua = (root.navigator && root.navigator.userAgent) || "";
    if (/Firefox\//.test(ua)) return "Firefox";
    if (/Edg\//.test(ua)) return "Edge";
    return "Chromium";
  }

  function sentStore() {
    const prefix = "desktop-memory:sent:";
    return {
      get(conversation, key) {
        try {
          return root.sessionStorage.getItem(prefix + conversation + ":" + key);
        } catch (e) { // storage disabled by the person: remember in memory only
          return (this.memory || {})[conversation + ":" + key] || null;
        }
      },
      set(conversation, key, value) {
        try {
          root.sessionStorage.setItem(prefix + conversation + ":" + key, value);
        } catch (e) { // storage disabled or full: remember in memory only
          this.memory = this.memory || {};
          this.memory[conversation + ":" + key] = value;
        }
      },
    };
  }

  function send(message) {
    return new Promise((resolve) => {
      try {
        const p = api.runtime.sendMessage(message, (reply) => {
          void api.runtime.lastError; // read so Chromium does not log it
          resolve(reply || null);
        });
        if (p && typeof p.then === "function") p.then((r) => resolve(r || null), () => resolve(null));
      } catch (e) { // the extension was reloaded or removed: this page's script is orphaned
        resolve(null);
      }
    });
  }

  // Focus the site's chat input and put `text` in it, as if typed/pasted (so the site's editor sees it).
  function insertInto(input, text) {
    input.focus();
    if (input.isContentEditable) {
      const sel = root.getSelection();
      const range = root.document.createRange();
      range.selectNodeContents(input);
      range.collapse(false);
      sel.removeAllRanges();
      sel.addRange(range);
      if (root.document.execCommand("insertText", false, text)) return true;
      input.textContent = (input.textContent || "") + text;
    } else if (typeof input.setRangeText === "function") {
      const at = input.selectionEnd ?? input.value.length;
      if (root.document.execCommand("insertText", false, text)) return true;
      input.setRangeText(text, at, at, "end");
    } else {
      return false;
    }
    input.dispatchEvent(new root.InputEvent("input", { bubbles: true, inputType: "insertText", data: text }));
    return true;
  }

  function start(adapter) {
    const state = { brokenSince: null, seen: {} };
    const store = sentStore();
    let settings = { paused: false, sites: {} };
    let health = "unknown";
    let timer = null;
    const inFlight = new Set();

    const enabled = () => !settings.paused && settings.sites[adapter.site] !== false;

    function read() {
      const conversation = adapter.conversationId(root.location);
      if (!conversation) return { conversation: null };
      let turns = null;
      try {
        const found = adapter.turns(root.document);
        turns = found && found.map((t) => ({
          key: String(t.key),
          prompt: readText(t.prompt, adapter.skip),
          answer: readText(t.answer, adapter.skip),
          streaming: Boolean(t.streaming),
        }));
      } catch (e) { // an adapter that throws on a redesigned page: treated as "cannot read it"
        turns = null;
      }
      return {
        conversation,
        turns,
        streaming: Boolean(adapter.isStreaming(root.document)),
        hasContent: Boolean(adapter.hasContent(root.document)),
      };
    }

    function report(next) {
      if (next === health || (next !== "ok" && next !== "changed")) return;
      health = next;
      send({ type: "dm-health", site: adapter.site, state: next === "changed" ? "changed" : "ok",
        message: next === "changed" ? CHANGED_MESSAGE : "" });
    }

    function scan() {
      timer = null;
      const on = enabled();
      const now = Date.now();
      const r = read();
      const plan = planScan(state, r, now, (c, k) => store.get(c, k));
      if (on) report(plan.health);
      for (const turn of plan.send) {
        if (!on) { // finished while capture was off: never sent, not even once capture is on again
          store.set(r.conversation, turn.key, turn.digest);
          continue;
        }
        const flight = r.conversation + ":" + turn.key + ":" + turn.digest;
        if (inFlight.has(flight)) continue;
        inFlight.add(flight);
        const capture = {
          kind: "exchange", site: adapter.site, app: adapter.app, url: String(root.location.href),
          title: adapter.title(root.document) || "", conversation: r.conversation, turn: turn.key,
          prompt: turn.prompt, answer: turn.answer, text: "", at: now / 1000, private: false,
          browser: browserName(),
        };
        send({ type: "dm-capture", capture }).then((reply) => {
          inFlight.delete(flight);
          if (reply && reply.accepted) store.set(r.conversation, turn.key, turn.digest);
          else schedule(5000); // the background was not there (e.g. waking up): try again
        });
      }
      if (plan.again !== null) schedule(Math.max(plan.again, TICK_MS));
    }

    function schedule(ms) {
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(scan, ms);
    }

    const observer = new MutationObserver(() => schedule(DEBOUNCE_MS));
    observer.observe(root.document.documentElement, { childList: true, subtree: true, characterData: true,
      attributes: true, attributeFilter: ["data-is-streaming", "aria-busy", "class", "data-testid"] });

    api.storage.local.get("settings").then((got) => {
      settings = Object.assign(settings, got.settings || {});
      schedule(0);
    }, () => schedule(0));
    api.storage.onChanged.addListener((changes, area) => {
      if (area === "local" && changes.settings) {
        settings = Object.assign({ paused: false, sites: {} }, changes.settings.newValue || {});
        schedule(DEBOUNCE_MS);
      }
    });
    api.runtime.onMessage.addListener((message, sender, reply) => {
      if (!message || message.type !== "dm-insert") return false;
      const input = adapter.input(root.document);
      if (!input) {
        reply({ ok: false, error: "no chat input box on this page" });
        return false;
      }
      reply({ ok: insertInto(input, String(message.text || "")) });
      return false;
    });
    root.addEventListener("popstate", () => schedule(DEBOUNCE_MS));
    schedule(DEBOUNCE_MS);
  }

  const DMCapture = { FINAL_MS, BROKEN_MS, CHANGED_MESSAGE, textOf, tidy, digest, planScan, readText, start,
    insertInto };
  root.DMCapture = DMCapture;
  if (typeof module === "object" && module.exports) module.exports = DMCapture;
})(globalThis);
