// node --test extension/tests/ : the background's and popup's pure helpers.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const C = require("../lib/common.js");

test("sites are named by host, chat.openai.com as chatgpt.com", () => {
  assert.equal(C.siteOf("https://chat.openai.com/c/1"), "chatgpt.com");
  assert.equal(C.siteOf("https://claude.ai/chat/x"), "claude.ai");
  assert.equal(C.siteOf("not a url"), "");
  assert.ok(C.isAssistantSite("gemini.google.com"));
  assert.ok(!C.isAssistantSite("example.org"));
});

test("the last captures keep 20 entries, newest first, and never a text", () => {
  let recent = [];
  for (let i = 0; i < 25; i++) {
    recent = C.addRecent(recent, { status: "added", message: "m", title: `t${i}`, text: "secret", prompt: "p",
      answer: "a", at: i });
  }
  assert.equal(recent.length, 20);
  assert.equal(recent[0].title, "t24");
  assert.deepEqual(Object.keys(recent[0]).sort(), ["at", "kind", "message", "site", "status", "title"]);
});

test("the queue is bounded: the oldest captures go first", () => {
  let queue = [];
  for (let i = 0; i < C.QUEUE_MAX + 5; i++) queue = C.enqueue(queue, { n: i });
  assert.equal(queue.length, C.QUEUE_MAX);
  assert.equal(queue[0].n, 5);
  const big = "x".repeat(1024 * 1024);
  queue = [];
  for (let i = 0; i < 6; i++) queue = C.enqueue(queue, { n: i, text: big });
  assert.ok(queue.length < 6 && queue[queue.length - 1].n === 5);
});

test("the badge says ! when the host is unreachable or a site's page changed", () => {
  assert.equal(C.badge({ reachable: true }, {}, {}).text, "");
  assert.deepEqual(C.badge({ reachable: false }, {}, {}), { text: "!", title: C.UNREACHABLE });
  const changed = C.badge({ reachable: true }, { "claude.ai": { state: "changed" } }, { sites: {} });
  assert.equal(changed.text, "!");
  assert.match(changed.title, /capture paused on this site: the page changed \(claude.ai\)/);
  assert.equal(C.badge({ reachable: true }, { "claude.ai": { state: "changed" } }, { sites: { "claude.ai": false } })
    .text, "");
});

test("page text is tidied", () => {
  assert.equal(C.tidyPage("  a \u00a0 b \n\n\n\n c  \r\n"), "a b\n\nc");
});

test("times read as people say them", () => {
  const now = Date.parse("2026-01-10T12:00:00Z");
  assert.equal(C.ago(now / 1000 - 30, now), "just now");
  assert.equal(C.ago("2026-01-10T11:50:00Z", now), "10 min ago");
  assert.equal(C.ago("2026-01-09T10:00:00Z", now), "yesterday");
  assert.equal(C.ago("2025-12-01T10:00:00Z", now), "2025-12-01");
});
