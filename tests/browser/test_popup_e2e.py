"""The toolbar popup and the context menu end to end in real browsers (issue 34): recall into the chat (search
in the popup, Enter, the engine's context in the chat's input box), "Remember selection" / "Remember this page"
on an ordinary site, this site's capture off, pause all, the last captures, and the popup when desktop-memory
cannot be reached.

Keys are real key events (CDP `Input.dispatchKeyEvent`, BiDi `input.performActions`); the context menu's click,
which neither protocol can make, is the background's `rememberFromMenu` called as the menu calls it, after the
harness gives the extension `activeTab` on that tab as the click does (`Browser.grant_active_tab`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser import harness
from tests.browser.test_capture_e2e import (  # noqa: F401 (browser, data_dir: fixtures used by name)
    QUIET_S,
    add_exchange,
    browser,
    conversation_url,
    data_dir,
    dm,
    needs_engine,
    open_conversation,
    popup_for,
    wait_memories,
    with_word,
    word,
)

pytestmark = pytest.mark.browser

ARTICLE_URL = f"https://{harness.OTHER_SITE}/guides/sourdough"
ARTICLE_TITLE = "Sourdough at home: a field guide"


def add_memory(data_dir: Path, text: str, title: str) -> str:  # noqa: F811 (the fixture's name)
    """`desktop-memory add` as a person runs it: the new memory's id."""
    return str(json.loads(dm(data_dir, "add", "--json", "--title", title, text))["id"])


def storage(browser: harness.Browser, key: str | None) -> Any:  # noqa: F811
    page = browser.new_tab(browser.popup_url())
    try:
        if key is None:  # all of it
            return page.evaluate("(globalThis.browser ?? chrome).storage.local.get(null)")
        return page.evaluate(f"(globalThis.browser ?? chrome).storage.local.get({json.dumps(key)})"
                             f".then((got) => got[{json.dumps(key)}] ?? null)")
    finally:
        page.close()


def popup_ready(popup: harness.Tab) -> None:
    """The popup has asked the background for its state (its checkboxes say what the settings are)."""
    popup.wait_for("document.getElementById('siteLabel').textContent !== 'Capture on this site'",
                   what="the popup's first refresh")


# -- recall into the chat ----------------------------------------------------------------------------------------


def paragraphs(text: str) -> list[str]:
    """The text's lines without the blank ones: a contenteditable box (ChatGPT's, Claude's) holds each line as
    a <div> and its innerText doubles the blank line after the first one."""
    return [line for line in text.splitlines() if line.strip()]


@needs_engine
@pytest.mark.parametrize("site", ["chatgpt.com", "claude.ai"])
def test_a_memory_searched_in_the_popup_goes_into_the_chat_input_with_enter(
        browser: harness.Browser, data_dir: Path, site: str) -> None:  # noqa: F811
    token = word()
    text = f"The {token} office wifi password rotates every Monday; ask Dana at the front desk."
    memory_id = add_memory(data_dir, text, f"{token} wifi")
    url = conversation_url(site)
    chat = open_conversation(browser, url, "Office questions")
    popup = popup_for(browser, url)
    try:
        popup_ready(popup)
        popup.evaluate("(document.getElementById('query').focus(), true)")
        popup.type(f"{token} wifi")
        popup.wait_for(f"[...document.querySelectorAll('#results li .snippet')].some((s) => "
                       f"s.textContent.includes({json.dumps(token)}))", what="the search's results")
        popup.type("\n")
        inserted = chat.wait_for(f"(() => {{ const t = window.fixture.inputText(); "
                                 f"return t.includes({json.dumps(token)}) && t; }})()",
                                 what="the context in the chat's input box")
        said = popup.evaluate("document.getElementById('searchState').textContent")
    finally:
        popup.close()
        chat.close()
    assert text in inserted
    # the engine's pasteable context for that memory and that query, as `desktop-memory context` gives it
    expected = dm(data_dir, "context", "--id", memory_id, f"{token} wifi")
    assert paragraphs(inserted) == paragraphs(expected)
    assert said == "Put into the chat's input box."


# -- the context menu on an ordinary site ------------------------------------------------------------------------


def remember_from_menu(browser: harness.Browser, url: str, menu_item: str,  # noqa: F811
                       selection: str = "") -> None:
    """What a click on the context menu's item does: the background's handler with the menu's `info` and tab."""
    info = {"menuItemId": menu_item, "pageUrl": url, **({"selectionText": selection} if selection else {})}
    browser.in_background(f"(globalThis.browser ?? chrome).tabs.query({{}}).then((tabs) => "
                          f"bg.rememberFromMenu({json.dumps(info)}, tabs.find((t) => t.url === {json.dumps(url)})))",
                          timeout=60)


@needs_engine
def test_remember_selection_stores_the_selected_text(browser: harness.Browser, data_dir: Path) -> None:  # noqa: F811
    token = word()
    url = f"{ARTICLE_URL}?{token}"
    page = browser.new_tab(url)
    try:
        # the selection: the hydration paragraph, with the test's word in it
        page.evaluate(f"(() => {{ const p = document.getElementById('hydration'); p.append(' {token}.'); "
                      "const range = document.createRange(); range.selectNodeContents(p); "
                      "getSelection().removeAllRanges(); getSelection().addRange(range); return true; })()")
        selected = page.evaluate("getSelection().toString()")
        browser.grant_active_tab(url)
        remember_from_menu(browser, url, "dm-selection", selected[:40])  # the menu's selectionText is cut short
        found = wait_memories(data_dir, token, lambda ms: len(ms) == 1, "the selection")
    finally:
        page.close()
    memory = found[0]
    assert memory["content"] == " ".join(selected.split())  # the whole selection, read in the page
    # the engine titles a selection by its own text (service/web.py), the page's title is the capture's window
    assert (memory["source"], memory["source_url"], memory["title"]) == ("browser", url, "")


@needs_engine
def test_remember_this_page_stores_its_readable_text(browser: harness.Browser, data_dir: Path) -> None:  # noqa: F811
    token = word()
    url = f"{ARTICLE_URL}?{token}"
    page = browser.new_tab(url)
    try:
        page.evaluate(f"(document.getElementById('bake').append(' {token}.'), true)")
        browser.grant_active_tab(url)
        remember_from_menu(browser, url, "dm-page")
        found = wait_memories(data_dir, token, lambda ms: len(ms) == 1, "the page")
    finally:
        page.close()
    memory = found[0]
    assert (memory["source"], memory["source_url"], memory["title"]) == ("browser", url, ARTICLE_TITLE)
    for paragraph in ("A starter wants flour, water and patience", "700 g of water for every kilogram",
                      "Bake in a preheated Dutch oven"):
        assert paragraph in memory["content"]
    for chrome in ("Recipes", "Cookie notice", "newsletter"):  # the page's nav and footer are left out
        assert chrome not in memory["content"]


# -- the popup's switches and list -------------------------------------------------------------------------------


@needs_engine
def test_site_off_and_pause_all_stop_capture_and_the_last_captures_say_what_happened(
        browser: harness.Browser, data_dir: Path) -> None:  # noqa: F811
    token, url = word(), conversation_url("chatgpt.com")
    title, title2 = f"Switches {token}", f"Another tab {token}"
    chat = open_conversation(browser, url, title)
    chat2 = open_conversation(browser, conversation_url("claude.ai"), title2)
    popup = popup_for(browser, url)
    try:
        popup_ready(popup)
        assert popup.evaluate("document.getElementById('siteLabel').textContent") == "Capture on chatgpt.com"
        assert popup.evaluate("document.getElementById('siteOn').checked") is True
        popup.evaluate("(document.getElementById('siteOn').click(), true)")  # this site's capture off
        popup.wait_for("(globalThis.browser ?? chrome).storage.local.get('settings')"
                       ".then((g) => g.settings && g.settings.sites['chatgpt.com'] === false)", what="site off")
        add_exchange(chat, f"Site off: is {token} one remembered?", "No: capture is off on this site.")
        popup.evaluate("(document.getElementById('siteOn').click(), true)")  # on again
        popup.wait_for("(globalThis.browser ?? chrome).storage.local.get('settings')"
                       ".then((g) => g.settings && g.settings.sites['chatgpt.com'] === true)", what="site on")
        popup.evaluate("(document.getElementById('pauseAll').click(), true)")  # and pause all
        popup.wait_for("(globalThis.browser ?? chrome).storage.local.get('settings').then((g) => g.settings"
                       " && g.settings.paused && g.settings.sites['chatgpt.com'] === true)", what="paused")
        add_exchange(chat, f"Paused: is {token} two remembered?", "No: all capture is paused.")
        time.sleep(QUIET_S)  # past the moment the extension would have sent them
        popup.evaluate("(document.getElementById('pauseAll').click(), true)")  # capture again
        popup.wait_for("(globalThis.browser ?? chrome).storage.local.get('settings')"
                       ".then((g) => g.settings && !g.settings.paused)", what="pause off")
        # two exchanges in two tabs, answered together: both stored, both in the last captures
        for tab, prompt, answer in ((chat, f"On: is {token} three remembered?", "Yes: capture is on again."),
                                    (chat2, f"And {token} four?", "Yes, four too.")):
            tab.evaluate(f"(window.sent = window.fixture.addExchange({json.dumps(prompt)}, {json.dumps(answer)}), "
                         "true)")
        for tab in (chat, chat2):
            tab.evaluate("window.sent", timeout=30)
        found = wait_memories(data_dir, token, lambda ms: len(ms) >= 2, "the exchanges made with capture on")
        time.sleep(1)
        found = with_word(data_dir, token)
        popup.goto(popup.evaluate("location.href"))  # the popup opened again
        popup_ready(popup)
        recent = popup.wait_for(
            f"(() => {{ const rows = [...document.querySelectorAll('#recent li')].map((li) => "
            f"[li.querySelector('.status').textContent, li.querySelector('.what').textContent]); "
            f"return rows.filter((r) => r[1].includes({json.dumps(token)})).length >= 2 && rows; }})()",
            what="the last captures")
        switches = popup.evaluate("[document.getElementById('siteOn').checked, "
                                  "document.getElementById('pauseAll').checked]")
    finally:
        popup.close()
        chat.close()
        chat2.close()
    assert sorted(m["content"] for m in found) == [f"You: And {token} four?\n\nClaude: Yes, four too.",
                                                   f"You: On: is {token} three remembered?\n\n"
                                                   "ChatGPT: Yes: capture is on again."]
    # the two exchanges stored, nothing for the two made while capture was off (they were never sent)
    assert sorted(r for r in recent if token in r[1]) == [["added", title2], ["added", title]]
    assert switches == [True, False]


def test_the_popup_says_when_desktop_memory_cannot_be_reached(
        browser_kind: str, browser_root: Path, fixture_server: harness.FixtureServer) -> None:
    """A browser whose host manifest points at a program that is not there (the app uninstalled, or moved)."""
    b = harness.launch(browser_kind, browser_root / "no-host", fixture_server, browser_root / "no-host-data",
                       host=browser_root / "no-host" / "gone" / "desktop-memory")
    try:
        url = conversation_url("claude.ai")
        chat = open_conversation(b, url)
        token = word()
        add_exchange(chat, f"My locker code is {token}, remember it", "Noted.")  # waits for the host, in memory
        harness.wait_until(lambda: any(r.get("status") == "queued" for r in storage(b, "recent") or []), 20,
                           "the capture kept for later")
        kept_on_disk = storage(b, None)  # everything the extension keeps in the profile (storage.local)
        popup = popup_for(b, url)
        try:
            notice = popup.wait_for("(() => { const box = document.getElementById('host'); "
                                    "return !box.hidden && box.textContent; })()", what="the popup's notice")
            popup.evaluate("(document.getElementById('query').focus(), true)")
            popup.type("anything")
            searched = popup.wait_for("document.getElementById('searchState').textContent",
                                      what="the search's answer")
        finally:
            popup.close()
            chat.close()
        badge = storage(b, "badge")
    finally:
        b.close()
    # the unredacted text waits in the browser session's memory (storage.session), never in the profile on disk
    assert token not in json.dumps(kept_on_disk)
    profile_files = [p for p in (browser_root / "no-host").rglob("*") if p.is_file()]
    assert not [p for p in profile_files if token.encode() in p.read_bytes()]
    assert notice == "desktop-memory is not reachable: run desktop-memory setup-browser"
    assert searched == "desktop-memory is not reachable: run `desktop-memory setup-browser`"
    assert badge == {"text": "!", "title": "desktop-memory is not reachable: run `desktop-memory setup-browser`"}
