from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sync.syncthing import SYNCTHING, Syncthing, pair, processes_using

FOLDER_ID = "dm-sync-test"


@pytest.fixture(scope="module")
def syncthing_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Syncthing, Syncthing]]:
    """Two Syncthing instances on loopback sharing FOLDER_ID (a.folder and b.folder), paired and idle. One pair
    per test module (starting one takes a few seconds); tests use distinct file names. Stopped at the end, and
    the teardown fails if any of their processes is left."""
    if SYNCTHING is None:
        pytest.skip("syncthing is not installed (bash scripts/dev.sh setup installs Debian's syncthing)")
    root = tmp_path_factory.mktemp("syncthing")
    with Syncthing(root / "home-a", root / "a", "a") as a, Syncthing(root / "home-b", root / "b", "b") as b:
        pair(a, b, FOLDER_ID)
        yield a, b
    left = processes_using(root)
    assert not left, f"syncthing processes left running: {left}"
