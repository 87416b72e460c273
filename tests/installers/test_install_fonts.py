"""installers/linux/install.sh says how to get a CJK font when none is installed (else Chinese shows as boxes)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux installer")
TOOLS = ("sh", "cp", "mkdir", "rm", "ln", "sed", "dirname", "head", "cat")


def _install(tmp_path: Path, fonts: str, package_tool: str | None) -> str:
    """Run install.sh from a stand-in bundle with only the tools it uses, a fake fc-list listing `fonts` and the
    package tool given; its output."""
    bundle = tmp_path / "bundle"
    (bundle / "_internal" / "desktop_memory" / "resources" / "icons").mkdir(parents=True)
    (bundle / "_internal" / "desktop_memory" / "resources" / "icons" / "ready.svg").write_text("<svg/>")
    (bundle / "desktop-memory.desktop").write_text("[Desktop Entry]\nExec=@BIN@\n")
    (bundle / "desktop-memory").write_text("#!/bin/sh\nexit 0\n")  # `setup-browser` succeeds
    (bundle / "desktop-memory").chmod(0o755)
    shutil.copy(ROOT / "installers" / "linux" / "install.sh", bundle / "install.sh")
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (tools / tool).symlink_to(found)
    (tools / "fc-list").write_text(f"#!/bin/sh\nprintf '%s' '{fonts}'\n")
    (tools / "fc-list").chmod(0o755)
    if package_tool:
        (tools / package_tool).write_text("#!/bin/sh\nexit 0\n")
        (tools / package_tool).chmod(0o755)
    env = {"PATH": str(tools), "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "home" / "share"),
           "XDG_CONFIG_HOME": str(tmp_path / "home" / "config")}
    done = subprocess.run([str(tools / "sh"), str(bundle / "install.sh")], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(("tool", "command"), [("apt-get", "sudo apt-get install fonts-wqy-microhei"),
                                               ("dnf", "sudo dnf install google-noto-sans-cjk-fonts")])
def test_without_a_cjk_font_the_installer_gives_the_one_command(tmp_path, tool, command) -> None:
    said = _install(tmp_path, "", tool)
    assert said.splitlines()[0].startswith("installed: ")
    assert said.splitlines()[-1] == ("note: no font for Chinese, Japanese or Korean text is installed, so such "
                                     f"memories show as boxes; to fix it: {command}")


def test_with_a_cjk_font_the_installer_says_nothing_about_fonts(tmp_path) -> None:
    said = _install(tmp_path, "Noto Sans CJK SC\n", "apt-get")
    assert "note:" not in said and len(said.splitlines()) == 2
    assert said.splitlines()[1].startswith("browser companion: the native host is registered")
    assert os.path.islink(tmp_path / "home" / ".local" / "bin" / "desktop-memory")
