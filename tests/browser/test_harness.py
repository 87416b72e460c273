"""The harness itself: each browser reaches every fixture site by its own name over HTTPS, with the extension
loaded, its popup page open, and the native host manifest found. A stand-in host answers here (the product's
host is tested end to end in test_capture_e2e.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import harness

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def host_log(browser_root: Path) -> Path:
    return browser_root / "host.log"


@pytest.fixture(scope="module")
def browser(browser_kind: str, browser_root: Path, fixture_server: harness.FixtureServer,
            host_log: Path) -> Iterator[harness.Browser]:
    host = harness.stand_in_host(browser_root / "stand-in", host_log)
    b = harness.launch(browser_kind, browser_root / "browser", fixture_server, browser_root / "data", host=host)
    yield b
    b.close()


def fixture_title(site: str) -> str:
    folder = harness.site_folder(site)
    assert folder is not None
    found = re.search(r"<title>(.*?)</title>", (folder / "index.html").read_text(), re.S)
    return found.group(1).strip() if found else ""


@pytest.mark.parametrize("site", [*harness.AI_SITES, "chat.openai.com", harness.OTHER_SITE])
def test_each_site_is_served_under_its_own_name_over_https(browser: harness.Browser, site: str) -> None:
    tab = browser.new_tab(f"https://{site}/c/0f1e2d3c-conversation?model=x")
    try:
        seen = tab.evaluate("({host: location.host, protocol: location.protocol, title: document.title, "
                            "path: location.pathname})")
        assert seen == {"host": site, "protocol": "https:", "title": fixture_title(site),
                        "path": "/c/0f1e2d3c-conversation"}
    finally:
        tab.close()


def test_the_extension_is_loaded_and_its_popup_opens(browser: harness.Browser, tmp_path: Path) -> None:
    if isinstance(browser, harness.Chromium):  # the id the manifest's key gives, the one EXTENSION_ID says
        assert browser.extension_id == (harness.EXTENSION / "EXTENSION_ID").read_text().strip()
        assert browser.worker_url.startswith(f"chrome-extension://{browser.extension_id}/")
    else:
        assert browser.extension_id == harness.FIREFOX_ID
    popup = browser.new_tab(browser.popup_url())
    try:
        assert popup.evaluate("location.href") == browser.popup_url()
        assert popup.evaluate("document.body.innerText.trim().length > 0")
        shot = popup.screenshot(tmp_path / "popup.png")
        assert shot.read_bytes().startswith(b"\x89PNG")
    finally:
        popup.close()


def test_the_native_host_manifest_is_found(browser: harness.Browser, host_log: Path) -> None:
    popup = browser.new_tab(browser.popup_url())
    try:
        reply = popup.evaluate("(globalThis.browser ?? chrome).runtime.sendNativeMessage("
                               f"'{harness.HOST_NAME}', {{id: 'smoke', type: 'hello'}})")
    finally:
        popup.close()
    assert reply == {"id": "smoke", "ok": True, "version": "stand-in", "engine": "offline", "paused": False}
    seen = [line for line in harness.iter_lines(host_log) if line["request"].get("id") == "smoke"]
    assert seen, "the stand-in host saw no hello"
    if isinstance(browser, harness.Chromium):  # how each browser starts a host (browser-spec.md)
        assert seen[0]["argv"][0] == f"chrome-extension://{browser.extension_id}/"
    else:
        assert seen[0]["argv"][0].endswith(f"{harness.HOST_NAME}.json")
        assert seen[0]["argv"][1] == harness.FIREFOX_ID


@pytest.mark.parametrize("site", harness.AI_SITES)
def test_an_exchange_reaches_the_host_as_the_contract_says(browser: harness.Browser, host_log: Path,
                                                           site: str) -> None:
    """What the extension sends for a finished exchange on each fixture page (browser-spec.md, WebCapture)."""
    conversation = {"chatgpt.com": "c/6f1d0c2e-8a41-4c1b-9d3e-2b7a5c9e0f14",
                    "claude.ai": "chat/0b7e4a91-3c2d-4e5f-a6b7-c8d9e0f1a2b3",
                    "gemini.google.com": "app/5a9c3e7b1d2f4a6c"}
    url = f"https://{site}/{conversation[site]}"
    tab = browser.new_tab(url)
    try:
        tab.wait_for("Boolean(window.fixture)", what="the fixture's driver")
        tab.evaluate("window.fixture.ready ?? true")
        tab.evaluate("window.fixture.setTitle('Harness check')")
        tab.evaluate(f"window.fixture.addExchange('Ping from {site}?', 'Pong.', {{streamMs: 0}})")

        def sent() -> list[dict]:
            return [line["request"]["capture"] for line in harness.iter_lines(host_log)
                    if line["request"].get("type") == "capture"
                    and line["request"]["capture"].get("prompt") == f"Ping from {site}?"]

        captures = harness.wait_until(sent, 15, f"a capture from {site}")
    finally:
        tab.close()
    assert len(captures) == 1, captures
    capture = captures[0]
    assert {k: capture[k] for k in ("kind", "site", "url", "title", "conversation", "prompt", "answer", "private",
                                    "browser")} == {
        "kind": "exchange", "site": site, "url": url, "title": "Harness check",
        "conversation": conversation[site].split("/")[1], "prompt": f"Ping from {site}?", "answer": "Pong.",
        "private": False, "browser": browser.name}
    assert capture["app"] == {"chatgpt.com": "ChatGPT", "claude.ai": "Claude", "gemini.google.com": "Gemini"}[site]
    assert capture["turn"]
