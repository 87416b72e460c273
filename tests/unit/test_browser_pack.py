"""The browser companion's packaging: the store zips and the extension's fixed id."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "extension"


def _pack_module():
    spec = importlib.util.spec_from_file_location("browser_pack", ROOT / "scripts" / "browser_pack.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["browser_pack"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def zips(tmp_path_factory):
    out = tmp_path_factory.mktemp("browser")
    assert _pack_module().main(["--out", str(out)]) == 0
    return out


def _manifest(zip_path: Path) -> dict:
    with zipfile.ZipFile(zip_path) as zf:
        return json.loads(zf.read("manifest.json"))


def _names(zip_path: Path) -> list[str]:
    with zipfile.ZipFile(zip_path) as zf:
        return zf.namelist()


def test_chromium_zip_has_a_service_worker_and_the_key(zips):
    manifest = _manifest(zips / "desktop-memory-chromium.zip")
    assert manifest["manifest_version"] == 3
    assert manifest["background"] == {"service_worker": "background.js"}
    assert manifest["key"]
    assert manifest["incognito"] == "not_allowed"
    assert "nativeMessaging" in manifest["permissions"]


def test_firefox_zip_has_background_scripts_and_the_gecko_id(zips):
    manifest = _manifest(zips / "desktop-memory-firefox.zip")
    assert "key" not in manifest
    assert "service_worker" not in manifest["background"]
    assert manifest["background"]["scripts"][-1] == "background.js"
    assert manifest["browser_specific_settings"]["gecko"]["id"] == "companion@desktop-memory.org"


@pytest.mark.parametrize("browser", ["chromium", "firefox"])
def test_every_file_the_manifest_names_is_in_the_zip(zips, browser):
    path = zips / f"desktop-memory-{browser}.zip"
    manifest, names = _manifest(path), set(_names(path))
    wanted = {manifest["action"]["default_popup"], *manifest["icons"].values()}
    wanted |= set(manifest["background"].get("scripts", []))
    wanted |= {manifest["background"]["service_worker"]} if "service_worker" in manifest["background"] else set()
    for entry in manifest["content_scripts"]:
        wanted |= set(entry["js"])
    assert wanted <= names
    assert not any(n.startswith("tests/") or n == "README.md" for n in names)


def test_zips_are_deterministic(zips, tmp_path):
    assert _pack_module().main(["--out", str(tmp_path)]) == 0
    for name in ("desktop-memory-chromium.zip", "desktop-memory-firefox.zip"):
        assert (tmp_path / name).read_bytes() == (zips / name).read_bytes()
        assert _names(tmp_path / name) == sorted(_names(tmp_path / name))


def test_extension_id_matches_the_key():
    manifest = json.loads((EXTENSION / "manifest.json").read_text(encoding="utf-8"))
    der = base64.b64decode(manifest["key"])
    digest = hashlib.sha256(der).hexdigest()[:32]
    expected = "".join(chr(ord("a") + int(c, 16)) for c in digest)
    assert (EXTENSION / "EXTENSION_ID").read_text(encoding="utf-8").strip() == expected


def test_missing_extension_is_one_line_and_exit_1(tmp_path, capsys):
    assert _pack_module().main(["--out", str(tmp_path), "--extension", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no manifest.json") and err.count("\n") == 1
