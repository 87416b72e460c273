"""Screenshots of the browser companion's popup for README.md and docs/screenshots/ (issue 34).

    bash scripts/with-desktop.sh .venv/bin/python -m tests.browser.make_popup_screenshots

Starts Debian's chromium headless with the extension (tests/browser/harness.py) over a temporary data folder,
lets it capture a ChatGPT conversation of the fixture pages and adds a few memories with `desktop-memory add`,
then opens the popup on that conversation and writes:
- browser-popup-search.png: the results of a search (Enter would put the first one into the chat);
- browser-popup-paused.png: "capture paused on this site: the page changed" (the fixture page redesigned);
- browser-popup-light.png / browser-popup-dark.png: the popup at rest (switches, last captures) in each theme
  (CDP Emulation.setEmulatedMedia prefers-color-scheme).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.browser import harness
from tests.browser.test_capture_e2e import add_exchange, dm, open_conversation, popup_for, with_word

OUT = harness.REPO / "docs" / "screenshots"
SCALE = 2  # device pixels per CSS pixel: sharp on a high-density screen, readable scaled down

EXCHANGES = [
    ("When does the beta ship?", "The beta ships on March 3rd; Priya owns the release notes."),
    ("What goes into the release checklist?",
     "Changelog, screenshots, signed installers for Windows and macOS, a smoke test on a clean VM, then the tag."),
]
NOTES = [
    ("Decision: the beta ships on March 3rd; Priya owns the release notes and the changelog.", "Beta date"),
    ("Retro notes: the release slipped a week because the installer signing certificate expired.", "Retro"),
    ("To rotate the staging database password run: make rotate-db ENV=staging", "Staging password"),
]


def shoot(popup: harness.ChromiumTab, name: str, scheme: str = "light") -> Path:
    popup.send("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    popup.send("Emulation.setDeviceMetricsOverride", {"width": 380, "height": 2000, "deviceScaleFactor": SCALE,
                                                      "mobile": False})  # laid out in full, then measured
    height = popup.evaluate("Math.ceil(document.body.getBoundingClientRect().height)")
    popup.send("Emulation.setDeviceMetricsOverride", {"width": 380, "height": int(height),
                                                      "deviceScaleFactor": SCALE, "mobile": False})
    time.sleep(0.3)  # the new media and size drawn
    target = OUT / f"{name}.png"
    popup.screenshot(target)
    print(target.relative_to(harness.REPO))
    return target


def main() -> int:
    if harness.missing(harness.CHROMIUM):
        print(f"{harness.CHROMIUM} is not installed (bash scripts/dev.sh setup installs it)", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dm-popup-shots-") as tmp:
        root = Path(tmp)
        server = harness.FixtureServer(root / "server")
        data_dir = root / "data"
        browser = harness.launch("chromium", root / "browser", server, data_dir)
        try:
            url = "https://chatgpt.com/c/6a1f0c2e-4b7d-4e8a-9c31-release-planning"
            chat = open_conversation(browser, url, "Beta release planning")
            for prompt, answer in EXCHANGES:
                add_exchange(chat, prompt, answer)
            harness.wait_until(lambda: len(with_word(data_dir, "beta")) >= 1, 120, "the captured exchanges")
            for text, title in NOTES:
                dm(data_dir, "add", "--title", title, text)
            harness.wait_until(lambda: len(with_word(data_dir, "checklist")) >= 1, 60, "the second exchange")

            popup = popup_for(browser, url)
            assert isinstance(popup, harness.ChromiumTab)
            popup.wait_for("chrome.storage.local.get('recent').then((got) => (got.recent || []).length >= 2)", 60,
                           "the last captures")
            popup.goto(popup.evaluate("location.href"))
            popup.wait_for("document.querySelectorAll('#recent li').length >= 2", what="the popup's last captures")
            popup.evaluate("(document.getElementById('query').blur(), true)")
            shoot(popup, "browser-popup-light", "light")
            shoot(popup, "browser-popup-dark", "dark")

            popup.evaluate("(document.getElementById('query').focus(), true)")
            popup.type("beta release")
            popup.wait_for("document.querySelectorAll('#results li').length >= 2", what="the search's results")
            shoot(popup, "browser-popup-search", "light")
            popup.close()

            other = "https://chatgpt.com/c/0b7e5d44-redesigned"
            changed = open_conversation(browser, other, "Trip ideas")
            changed.evaluate("(window.fixture.redesign(), true)")
            add_exchange(changed, "Where should we go in May?", "Lisbon: warm, and the flights are short.")
            paused = popup_for(browser, other)
            assert isinstance(paused, harness.ChromiumTab)
            paused.wait_for("chrome.storage.local.get('health').then((got) => "
                            "(got.health || {})['chatgpt.com']?.state === 'changed')", 30, "capture to pause")
            paused.goto(paused.evaluate("location.href"))  # the popup opened again: it says so
            paused.wait_for("!document.getElementById('changed').hidden", what="the notice")
            paused.evaluate("(document.getElementById('query').blur(), true)")
            shoot(paused, "browser-popup-paused", "light")
            paused.close()
            changed.close()
            chat.close()
        finally:
            browser.close()
            server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
