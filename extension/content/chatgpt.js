// desktop-memory companion: ChatGPT (chatgpt.com, chat.openai.com). Reads the page's structured attributes:
// data-message-author-role / data-message-id on each message (the ids are the conversation's own message
// ids, the ones in ChatGPT's export), with the conversation-turn articles as a fallback.
(function () {
  "use strict";
  const one = (root, sel) => root.querySelector(sel);
  const all = (root, sel) => Array.from(root.querySelectorAll(sel));

  function role(el) {
    return el.getAttribute("data-message-author-role") || el.getAttribute("data-turn") || "";
  }

  function group(messages, keyOf, answerOf) {
    const turns = [];
    let turn = null;
    for (const el of messages) {
      const r = role(el);
      if (r === "user") {
        turn = { key: keyOf(el, turns.length + 1), prompt: one(el, ".whitespace-pre-wrap") || el, answers: [] };
        turns.push(turn);
      } else if (r === "assistant" && turn) {
        turn.answers.push(answerOf(el));
      }
    }
    return turns.map((t) => {
      const last = t.answers[t.answers.length - 1] || null;
      return {
        key: t.key,
        prompt: t.prompt,
        // several assistant messages after one prompt (tool use, search): their texts, in order
        answer: t.answers.length > 1 ? t.answers.map((a) => DMCapture.readText(a)).join("\n\n") : last,
        streaming: t.answers.some((a) => a.classList.contains("result-streaming")
          || Boolean(a.querySelector(".result-streaming"))),
      };
    });
  }

  DMCapture.start({
    site: "chatgpt.com",
    app: "ChatGPT",
    conversationId(location) {
      const m = /\/c\/([A-Za-z0-9-]{6,})/.exec(location.pathname);
      return m ? m[1] : null;
    },
    title(doc) {
      const id = this.conversationId(doc.location);
      const link = id && one(doc, `nav a[href$="/c/${id}"]`);
      const fromNav = link ? link.textContent.trim() : "";
      const fromDoc = doc.title.replace(/\s*[|-]\s*ChatGPT\s*$/, "").trim();
      return fromNav || (fromDoc === "ChatGPT" ? "" : fromDoc);
    },
    turns(doc) {
      const messages = all(doc, "[data-message-author-role]");
      if (messages.length) {
        return group(messages,
          (el, n) => el.getAttribute("data-message-id") || `turn-${n}`,
          (el) => one(el, ".markdown") || el);
      }
      // fallback: the turn articles, without the message attributes
      const articles = all(doc, 'article[data-testid^="conversation-turn-"]');
      return group(articles, (el, n) => `turn-${n}`, (el) => one(el, ".markdown") || el);
    },
    isStreaming(doc) {
      return Boolean(one(doc, '[data-testid="stop-button"], .result-streaming'));
    },
    hasContent(doc) {
      const main = one(doc, "main");
      if (!main) return false;
      const composer = all(main, "form").reduce((n, f) => n + f.textContent.trim().length, 0);
      return main.textContent.trim().length - composer > 0;
    },
    input(doc) {
      return one(doc, "#prompt-textarea") || one(doc, 'form [contenteditable="true"]') || one(doc, "form textarea");
    },
  });
})();
