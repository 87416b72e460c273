"""Screenshots of the real app's windows for README.md and docs/screenshots/, light and dark.

    bash scripts/with-desktop.sh .venv/bin/python -m tests.gui.make_screenshots

Runs the real engine (and the real embedding model) on a temporary data folder under the X server of the
desktop session, and writes NAME-light.png and NAME-dark.png for the search panel, the preview, the
settings dialog, the first-start welcome and the tray menu. Each theme runs in a process of its own (a
palette is read when windows are built).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
THEMES = ("light", "dark")
DEMO = [
    ("Decision: the beta ships on March 3rd; Priya owns the release notes and the changelog.", "clipboard",
     "slack", ["work"], True),
    ("Beta release checklist: changelog, screenshots, signed installers for Windows and macOS, "
     "smoke test on a clean VM, then tag v0.9.0.", "hotkey", "firefox", ["work", "release"], False),
    ("To rotate the staging database password run: make rotate-db ENV=staging", "clipboard", "terminal",
     ["infra"], False),
    ("def release_notes(tag: str) -> str:\n    \"\"\"The changelog entries since the last release tag.\"\"\"\n"
     "    return run(['git', 'log', f'{tag}..HEAD', '--oneline'])", "clipboard", "code", ["release"], False),
    ("https://github.com/example/app/releases/tag/v0.8.2 - release notes of the previous beta", "clipboard",
     "firefox", [], False),
    ("Hi Priya, the release build for the beta is green; can you send the notes to the beta list today? "
     "Thanks, Marco", "clipboard", "thunderbird", ["work"], False),
    ("Retro notes: the release slipped a week because the installer signing certificate expired.", "clipboard",
     "obsidian", ["work"], False),
    ("Pasta recipe: boil 100 g spaghetti 9 minutes, toss with garlic, olive oil and chili.", "manual", "",
     [], False),
    # one of each kind the rows tell apart (issue 33): a command, YAML, a stack trace, a to-do list, a chat, an
    # address, text in Chinese
    ("rsync -avz --delete ./build/ deploy@10.0.4.17:/srv/www/release/", "clipboard", "terminal", ["release"],
     False),
    ("release:\n  channel: beta\n  version: 0.9.0\n  notes: docs/release-notes.md", "clipboard", "code", [],
     False),
    ("Traceback (most recent call last):\n  File \"release.py\", line 42, in sign\n    cert.verify()\n"
     "CertificateExpired: the signing certificate expired on 2026-10-31", "clipboard", "terminal", [], False),
    ("Release day\n- [x] changelog\n- [ ] screenshots\n- [ ] signed installers\n- [ ] tag v0.9.0",
     "clipboard", "obsidian", ["release"], False),
    ("[10:02] Priya: is the beta build signed?\n[10:03] Marco: yes, the release is on the staging bucket",
     "clipboard", "slack", [], False),
    ("发布说明：测试版将于三月三日发布，请在周五之前完成更新日志。", "clipboard", "wechat", [], False),
    ("Allergic to penicillin: tell every new doctor, it gave me hives in 2019.", "manual", "", ["health"], False),
    ("Parking: visitors must leave the courtyard spaces free on Fridays before 8.", "clipboard", "thunderbird", [],
     False),
]


def dark_palette():  # type: ignore[no-untyped-def]
    """A dark palette like a desktop's dark theme (Fusion draws with it)."""
    from PySide6.QtGui import QColor, QPalette

    pal = QPalette()
    roles = QPalette.ColorRole
    for role, colour in ((roles.Window, "#2b2b2e"), (roles.WindowText, "#e8e8ea"), (roles.Base, "#1f1f22"),
                         (roles.AlternateBase, "#2b2b2e"), (roles.ToolTipBase, "#2b2b2e"),
                         (roles.ToolTipText, "#e8e8ea"), (roles.Text, "#e8e8ea"), (roles.Button, "#35353a"),
                         (roles.ButtonText, "#e8e8ea"), (roles.BrightText, "#ff6b6b"), (roles.Link, "#6ea8fe"),
                         (roles.Highlight, "#3d6fd6"), (roles.HighlightedText, "#ffffff"),
                         (roles.PlaceholderText, "#9a9aa0"), (roles.Mid, "#55555c"), (roles.Dark, "#18181a"),
                         (roles.Light, "#45454c"), (roles.Midlight, "#3a3a40"), (roles.Shadow, "#000000")):
        pal.setColor(role, QColor(colour))
    for role in (roles.Text, roles.WindowText, roles.ButtonText):
        pal.setColor(QPalette.ColorGroup.Disabled, role, QColor("#77777d"))
    return pal


def settle(ms: int = 300) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def wait_until(condition, timeout_s: float = 180) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        settle(50)


def shoot(widget, name: str, theme: str) -> None:  # type: ignore[no-untyped-def]
    settle()
    target = OUT / f"{name}-{theme}.png"
    widget.grab().save(str(target))
    print(f"wrote {target}", flush=True)


def shoot_screen(rect, name: str, theme: str) -> None:  # type: ignore[no-untyped-def]
    """What the X server shows in `rect` (a panel with its popup, both real windows)."""
    from PySide6.QtGui import QGuiApplication

    settle()
    target = OUT / f"{name}-{theme}.png"
    screen = QGuiApplication.primaryScreen()
    screen.grabWindow(0, rect.x(), rect.y(), rect.width(), rect.height()).save(str(target))
    print(f"wrote {target}", flush=True)


def fill(folder: Path) -> None:
    from desktop_memory.core.errors import DesktopMemoryError
    from desktop_memory.service import MemoryService

    lines = [json.dumps({"content": c, "source": s, "source_app": a, "tags": t, "pinned": p,
                         "created_at": f"2026-11-{10 + i}T10:{i:02d}:00"}) for i, (c, s, a, t, p) in enumerate(DEMO)]
    with MemoryService(folder) as service:
        service.import_records(lines)
        try:  # titles, summaries and entities from the bundled local model, as the app makes them
            service.enrich(len(DEMO))
        except DesktopMemoryError as exc:
            print(f"no enrichment for the pictures: {exc}", flush=True)


def run_theme(theme: str, folder: Path) -> int:
    """Shoot every window in one theme (this process builds its windows with that palette)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtWidgets import QApplication

    from desktop_memory.engine.settings import Settings
    from desktop_memory.qt.bridge import EngineBridge
    from desktop_memory.qt.search_window import SearchWindow
    from desktop_memory.qt.settings_window import SettingsWindow
    from desktop_memory.qt.tray import Tray
    from desktop_memory.qt.welcome import WelcomeWindow
    from desktop_memory.service import MemoryService

    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    if theme == "dark":
        app.setPalette(dark_palette())
    bridge = EngineBridge(lambda: MemoryService(folder))
    ready: list[bool] = []
    bridge.opened.connect(lambda: ready.append(True))
    bridge.start()
    wait_until(lambda: bool(ready))
    settings = Settings.load(folder)

    search = SearchWindow(bridge, settings)
    finished: list[str] = []
    search.search_finished.connect(lambda q, n: finished.append(q))
    search.show_and_focus()
    search.query.setText("beta release")
    wait_until(lambda: finished and finished[-1] == "beta release")
    settle(600)
    search.list.selectionModel().select(search.model.index(1), search.list.selectionModel().SelectionFlag.Select)
    shoot(search, "search", theme)
    search.list.setCurrentIndex(search.model.index(0))
    search.preview_control.open()
    shoot(search, "preview", theme)
    search.preview_control.close()

    def query(text: str) -> None:
        search.query.setText(text)
        wait_until(lambda: finished and finished[-1] == text)
        settle(600)

    query("release")  # every kind of row: one-line commands, lists, traces, chats, YAML
    shoot(search, "search-kinds", theme)
    search.footer.open_menu()  # Ctrl+K
    settle(400)
    shoot_screen(search.frameGeometry().united(search.footer.menu.frameGeometry()), "actions-menu", theme)
    search.footer.menu.dismiss()
    query("abcdefghij")  # nothing like it: weak matches only, said so
    shoot(search, "weak-only", theme)
    query("medication I must not be prescribed")  # the allergy first, a lone "must" after the line
    shoot(search, "weak-matches", theme)
    query("pasta source:manual")  # one result
    search.act.forget()
    wait_until(lambda: search.stack.currentWidget() is search.empty)
    shoot(search, "forgotten", theme)
    search.act.undo_forget()
    query("beta release")
    search.paste_problem.setText("Copied, not pasted: the window you came from is gone: the context is on the "
                                 "clipboard; paste it with Ctrl+V")
    search.paste_problem.show()
    search.look.fit()
    shoot(search, "paste-problem", theme)
    search.paste_problem.hide()
    search.hide()

    window = SettingsWindow(bridge, folder)
    window.show_settings(settings)
    window.ignore_patterns.setPlainText("^\\d{6}$")
    window.ignore_apps.setPlainText("keepassxc")
    shoot(window, "settings", theme)
    window.tabs.setCurrentIndex(1)
    shoot(window, "settings-capture", theme)
    window.tabs.setCurrentIndex(2)
    shoot(window, "settings-hotkeys", theme)
    window.hide()

    welcome = WelcomeWindow(settings, Path.home() / ".local/share/desktop-memory")
    welcome.show_centred()
    shoot(welcome, "welcome", theme)
    welcome.hide()

    tray = Tray()
    tray.set_hotkeys({"search": settings.hotkey_search, "capture": settings.hotkey_capture,
                      "selection": settings.hotkey_selection})
    tray.menu.popup(QPoint(400, 200))
    shoot(tray.menu, "tray-menu", theme)
    tray.menu.hide()
    bridge.stop()
    return 0


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--theme":
        return run_theme(sys.argv[2], Path(sys.argv[3]))
    OUT.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="screenshots-"))
    fill(folder)
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    for theme in THEMES:
        done = subprocess.run([sys.executable, "-m", "tests.gui.make_screenshots", "--theme", theme, str(folder)],
                              env=env, timeout=600)
        if done.returncode:
            return done.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
