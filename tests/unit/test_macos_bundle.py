"""What makes the macOS app a menu-bar app and what the GitHub jobs run (installers/, .github/workflows/).

The dmg and the real-Windows install cannot be built here; these checks keep the files saying what the
README promises: LSUIElement in the bundle, pyobjc only on macOS, and jobs that build, smoke-test,
install and uninstall.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bundle_info_plist() -> dict:
    tree = ast.parse((ROOT / "installers" / "desktop-memory.spec").read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "BUNDLE"]
    assert len(calls) == 1
    plist = next(k.value for k in calls[0].keywords if k.arg == "info_plist")
    return ast.literal_eval(plist)


def test_the_app_bundle_is_a_menu_bar_app():
    assert _bundle_info_plist()["LSUIElement"] is True


def test_pyobjc_is_required_on_macos_only():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    mac = [d for d in deps if d.lower().startswith("pyobjc")]
    assert {d.split(">")[0].lower() for d in mac} == {"pyobjc-framework-cocoa", "pyobjc-framework-quartz",
                                                       "pyobjc-framework-applicationservices"}
    assert all(d.endswith("; sys_platform == 'darwin'") for d in mac)


def test_the_workflow_builds_smoke_tests_installs_and_uninstalls():
    yaml = pytest.importorskip("yaml")
    jobs = yaml.safe_load((ROOT / ".github" / "workflows" / "installers.yml").read_text(encoding="utf-8"))["jobs"]
    runs = {name: "\n".join(str(s.get("run", "")) for s in job["steps"]) for name, job in jobs.items()}
    assert set(jobs["macos"]["strategy"]["matrix"]["runner"]) == {"macos-14", "macos-13"}  # arm64 and x86_64
    assert jobs["windows"]["runs-on"].startswith("windows")
    for name, steps in runs.items():  # llama.cpp built for the architecture, never the runner's CPU (issue 28)
        assert "scripts/llama_build.sh" in steps and steps.index("llama_build.sh") < steps.index("pip install -e"), name
    assert "build_dmg.sh" in runs["macos"] and "--smoke-test" in runs["macos"] and "hdiutil attach" in runs["macos"]
    assert "test_macos_" in runs["macos"] and jobs["macos"]["env"]["QT_QPA_PLATFORM"] == "offscreen"
    win = runs["windows"]
    order = ["installers/build.py", "iscc", "/VERYSILENT", "Programs\\desktop-memory\\desktop-memory.exe\") --smoke",
             "unins000.exe", "left behind after uninstall"]
    assert all(step in win for step in order) and [win.index(s) for s in order] == sorted(win.index(s) for s in order)
