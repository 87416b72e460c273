// node --test extension/tests/ : the capture engine's pure parts, on plain-object DOM trees.
"use strict";
const test = require("node:test");
const assert = require("node:assert/strict");
const C = require("../content/capture.js");

function h(tagName, attrs, ...children) {
  const node = {
    nodeType: 1, tagName: tagName.toUpperCase(), attrs: attrs || {},
    childNodes: children.map((c) => (typeof c === "string" ? { nodeType: 3, nodeValue: c } : c)),
    getAttribute(name) { return name in this.attrs ? this.attrs[name] : null; },
    get textContent() { return this.childNodes.map((c) => (c.nodeType === 3 ? c.nodeValue : c.textContent)).join(""); },
    querySelector(sel) { // only "code" is needed by the engine
      for (const c of this.childNodes) {
        if (c.nodeType !== 1) continue;
        if (c.tagName.toLowerCase() === sel) return c;
        const deeper = c.querySelector(sel);
        if (deeper) return deeper;
      }
      return null;
    },
  };
  return node;
}

test("paragraphs, lists and line breaks keep their shape", () => {
  const answer = h("div", { class: "markdown prose" },
    h("p", {}, "First   paragraph", h("br"), "second line."),
    h("ul", {}, h("li", {}, "one"), h("li", {}, "two")),
    h("p", {}, "Last."));
  assert.equal(C.textOf(answer), "First paragraph\nsecond line.\n\n- one\n- two\n\nLast.");
});

test("a code block keeps its lines and leaves out the copy button and language header", () => {
  const answer = h("div", {},
    h("p", {}, "Run this:"),
    h("pre", {}, h("div", {}, h("div", {}, "python"), h("button", {}, "Copy code")),
      h("div", {}, h("code", { class: "whitespace-pre! language-python" }, "def f():\n    return 1\n"))),
    h("p", {}, "Done."));
  assert.equal(C.textOf(answer), "Run this:\n\n```python\ndef f():\n    return 1\n```\n\nDone.");
});

test("screen-reader labels, hidden parts and buttons are not part of the text", () => {
  const turn = h("article", {},
    h("h5", { class: "sr-only" }, "You said:"),
    h("div", { "aria-hidden": "true" }, "decoration"),
    h("div", { class: "whitespace-pre-wrap" }, "line one\n\nline  three"),
    h("button", {}, "Edit message"));
  assert.equal(C.textOf(turn), "line one\n\nline  three");
});

test("a page-provided isHidden check leaves hidden elements out", () => {
  const node = h("div", {}, h("span", { id: "a" }, "shown "), h("span", { id: "b" }, "hidden"));
  assert.equal(C.textOf(node, { isHidden: (el) => el.attrs.id === "b" }), "shown");
});

test("tidy drops trailing spaces and extra blank lines but not inside code fences", () => {
  assert.equal(C.tidy("a  \n\n\n\nb\n```\nx  \n\n\n\ny\n```\n"), "a\n\nb\n```\nx  \n\n\n\ny\n```");
});

test("digest differs for different texts and is stable", () => {
  assert.equal(C.digest("abc"), C.digest("abc"));
  assert.notEqual(C.digest("abc"), C.digest("abd"));
});

function reader(turns, extra) {
  return Object.assign({ conversation: "conv1", turns, streaming: false, hasContent: true }, extra || {});
}

test("an answer is sent only after it stays the same for FINAL_MS, and only once", () => {
  const state = { brokenSince: null, seen: {} };
  const sent = {};
  const sentOf = (c, k) => sent[c + k] || null;
  const turns = [{ key: "m1", prompt: "Q", answer: "A", streaming: false }];
  let plan = C.planScan(state, reader(turns), 0, sentOf);
  assert.deepEqual(plan.send, []);
  assert.equal(plan.again, C.FINAL_MS);
  plan = C.planScan(state, reader(turns), C.FINAL_MS - 1, sentOf);
  assert.deepEqual(plan.send, []);
  plan = C.planScan(state, reader(turns), C.FINAL_MS, sentOf);
  assert.equal(plan.send.length, 1);
  assert.equal(plan.send[0].answer, "A");
  sent.conv1m1 = plan.send[0].digest;
  plan = C.planScan(state, reader(turns), C.FINAL_MS * 3, sentOf);
  assert.deepEqual(plan.send, []);
});

test("a streaming answer is never sent, however long it stays the same", () => {
  const state = { brokenSince: null, seen: {} };
  const turns = [{ key: "m1", prompt: "Q", answer: "Par", streaming: false }];
  for (const now of [0, 2000, 5000, 10000]) {
    const plan = C.planScan(state, reader(turns, { streaming: true }), now, () => null);
    assert.deepEqual(plan.send, []);
    assert.equal(plan.health, "ok");
  }
  // streaming ends: FINAL_MS from the last time it was seen streaming
  assert.deepEqual(C.planScan(state, reader(turns), 10500, () => null).send, []);
  assert.equal(C.planScan(state, reader(turns), 10000 + C.FINAL_MS, () => null).send.length, 1);
});

test("a changed answer (regenerated) is sent again", () => {
  const state = { brokenSince: null, seen: {} };
  const sent = {};
  const sentOf = (c, k) => sent[k] || null;
  const first = [{ key: "m1", prompt: "Q", answer: "A1", streaming: false }];
  C.planScan(state, reader(first), 0, sentOf);
  const plan = C.planScan(state, reader(first), 2000, sentOf);
  sent.m1 = plan.send[0].digest;
  const second = [{ key: "m1", prompt: "Q", answer: "A2", streaming: false }];
  assert.deepEqual(C.planScan(state, reader(second), 3000, sentOf).send, []);
  const again = C.planScan(state, reader(second), 3000 + C.FINAL_MS, sentOf).send;
  assert.equal(again.length, 1);
  assert.equal(again[0].answer, "A2");
});

test("a page the adapter cannot read pauses capture after BROKEN_MS, and recovers", () => {
  const state = { brokenSince: null, seen: {} };
  let plan = C.planScan(state, reader(null), 0, () => null);
  assert.equal(plan.health, "waiting");
  plan = C.planScan(state, reader([]), C.BROKEN_MS - 1, () => null);
  assert.equal(plan.health, "waiting");
  plan = C.planScan(state, reader(null), C.BROKEN_MS, () => null);
  assert.equal(plan.health, "changed");
  assert.deepEqual(plan.send, []);
  plan = C.planScan(state, reader([{ key: "t", prompt: "Q", answer: "A" }]), C.BROKEN_MS + 1, () => null);
  assert.equal(plan.health, "ok");
});

test("turns found without an answer's text count as unreadable, not as captures", () => {
  const state = { brokenSince: null, seen: {} };
  const stub = [{ key: "t1", prompt: "Q", answer: "", streaming: false }, { key: "t2", prompt: "Q2", answer: "A" }];
  C.planScan(state, reader(stub), 0, () => null);
  const plan = C.planScan(state, reader(stub), C.BROKEN_MS, () => null);
  assert.equal(plan.health, "changed");
  assert.deepEqual(plan.send, []);
});

test("an empty new conversation page is fine; pages that are not conversations are idle", () => {
  const state = { brokenSince: null, seen: {} };
  assert.equal(C.planScan(state, reader([], { hasContent: false }), 0, () => null).health, "ok");
  assert.equal(C.planScan(state, { conversation: null }, 0, () => null).health, "idle");
});
