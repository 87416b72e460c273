"""Fixtures of the real-browser tests (issue 34): see harness.py. Each module starts one browser of each kind
(module scope: a browser takes 1-3 s to start); the fixture server runs once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import harness


def require(kind: str) -> None:
    """Skip when the browser is not installed (scripts/dev.sh installs both, so CI runs these tests); a
    checkout without the extension is a failure, not a skip."""
    if harness.missing(harness.binary(kind)):
        pytest.skip(f"{harness.binary(kind)} is not installed (bash scripts/dev.sh setup installs it)")
    if not (harness.EXTENSION / "manifest.json").is_file():
        pytest.fail(f"no extension at {harness.EXTENSION}")


@pytest.fixture(scope="session")
def fixture_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[harness.FixtureServer]:
    server = harness.FixtureServer(tmp_path_factory.mktemp("fixture-server"))
    yield server
    server.close()


@pytest.fixture(scope="module", params=["chromium", "firefox"])
def browser_kind(request: pytest.FixtureRequest) -> str:
    require(request.param)
    return str(request.param)


@pytest.fixture(scope="module")
def browser_root(browser_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp(browser_kind)
