// desktop-memory companion: Claude (claude.ai). Reads the page's structured attributes: the prompt's
// data-testid="user-message" and the answer's container with data-is-streaming (true while it streams),
// with the font-user-message / font-claude-response classes as a fallback. The conversation's message
// uuids are not in the page, so the turn key is "turn-<n>".
(function () {
  "use strict";
  const one = (root, sel) => root.querySelector(sel);
  const all = (root, sel) => Array.from(root.querySelectorAll(sel));

  function turnsFrom(nodes, isUser) {
    const turns = [];
    for (const el of nodes) {
      if (isUser(el)) {
        turns.push({ key: `turn-${turns.length + 1}`, prompt: el, answer: null, streaming: false });
      } else if (turns.length && !turns[turns.length - 1].answer) {
        const t = turns[turns.length - 1];
        const box = el.closest("[data-is-streaming]") || el;
        t.answer = one(box, ".font-claude-response") || one(box, ".font-claude-message") || el;
        t.streaming = box.getAttribute("data-is-streaming") === "true";
      }
    }
    return turns;
  }

  DMCapture.start({
    site: "claude.ai",
    app: "Claude",
    conversationId(location) {
      const m = /\/chat\/([0-9a-fA-F-]{8,})/.exec(location.pathname);
      return m ? m[1] : null;
    },
    title(doc) {
      const button = one(doc, '[data-testid="chat-title-button"]');
      const fromButton = button ? button.textContent.trim() : "";
      const fromDoc = doc.title.replace(/\s*-\s*Claude\s*$/, "").trim();
      return fromButton || (fromDoc === "Claude" ? "" : fromDoc);
    },
    turns(doc) {
      const structured = all(doc, '[data-testid="user-message"], [data-is-streaming]');
      if (structured.some((el) => el.matches('[data-testid="user-message"]'))) {
        return turnsFrom(structured, (el) => el.matches('[data-testid="user-message"]'));
      }
      // the class is "!font-user-message" (Tailwind's important prefix): matched by substring
      const styled = all(doc, '[class*="font-user-message"], .font-claude-response');
      return turnsFrom(styled, (el) => /font-user-message/.test(el.className));
    },
    isStreaming(doc) {
      return Boolean(one(doc, '[data-is-streaming="true"]'));
    },
    hasContent(doc) {
      const main = one(doc, "main") || doc.body;
      const composer = all(main, '[contenteditable="true"], fieldset').reduce(
        (n, f) => n + f.textContent.trim().length, 0);
      return main.textContent.trim().length - composer > 0;
    },
    input(doc) {
      return one(doc, '[data-testid="chat-input"] [contenteditable="true"]')
        || one(doc, 'div.ProseMirror[contenteditable="true"]') || one(doc, "fieldset textarea");
    },
  });
})();
