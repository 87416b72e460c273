// desktop-memory companion: Gemini (gemini.google.com). Reads the page's own elements: one
// .conversation-container per exchange holding <user-query> and <model-response>, the answer in
// <message-content> (its .markdown panel is aria-busy="true" while the answer streams).
(function () {
  "use strict";
  const one = (root, sel) => root.querySelector(sel);
  const all = (root, sel) => Array.from(root.querySelectorAll(sel));

  // each line of the prompt is its own <p class="query-text-line">: one line each, not paragraphs
  function promptOf(query) {
    const lines = all(query, ".query-text-line");
    if (lines.length) return lines.map((p) => p.textContent.replace(/\s+$/, "")).join("\n");
    return one(query, ".query-text") || query;
  }

  DMCapture.start({
    site: "gemini.google.com",
    app: "Gemini",
    skip: ".code-block-decoration", // a code block's language label and copy button
    conversationId(location) {
      const m = /\/(?:app|gem\/[^/]+)\/([A-Za-z0-9_-]{6,})/.exec(location.pathname);
      return m ? m[1] : null;
    },
    title(doc) {
      const picked = one(doc, '[data-test-id="conversation-title"]')
        || one(doc, ".conversation.selected .conversation-title");
      const fromPage = picked ? picked.textContent.trim() : "";
      const fromDoc = doc.title.replace(/\s*[-|]\s*(Google )?Gemini\s*$/, "").trim();
      return fromPage || (/^(Google )?Gemini$/.test(fromDoc) ? "" : fromDoc);
    },
    turns(doc) {
      const containers = all(doc, ".conversation-container");
      const pairs = containers.length
        ? containers.map((c) => [one(c, "user-query"), one(c, "model-response")])
        : all(doc, "user-query").map((q) => [q, q.nextElementSibling && q.nextElementSibling.matches("model-response")
          ? q.nextElementSibling : null]);
      return pairs.filter(([query]) => query).map(([query, response], i) => {
        const content = response && (one(response, "message-content") || response);
        const panel = content && (one(content, ".markdown") || content);
        return {
          key: `turn-${i + 1}`,
          prompt: promptOf(query),
          answer: panel,
          streaming: Boolean(response && (one(response, '[aria-busy="true"]')
            || response.getAttribute("aria-busy") === "true")),
        };
      });
    },
    isStreaming(doc) {
      return Boolean(one(doc, 'button[aria-label="Stop response"], model-response [aria-busy="true"]'));
    },
    hasContent(doc) {
      const main = one(doc, "main") || doc.body;
      const composer = all(main, "rich-textarea, input-area-v2").reduce(
        (n, f) => n + f.textContent.trim().length, 0);
      return main.textContent.trim().length - composer > 0;
    },
    input(doc) {
      return one(doc, 'rich-textarea [contenteditable="true"]') || one(doc, '[contenteditable="true"][role="textbox"]');
    },
  });
})();
