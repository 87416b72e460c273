from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"
# The suite runs on plain data folders, also where no OS keyring exists (an explicit, documented choice);
# tests/integration/test_encryption*.py and test_backup*.py run encrypted against a real Secret Service.
os.environ["DESKTOP_MEMORY_ENCRYPTION"] = "off"
# An engine service a test's MCP server or CLI starts (ipc/service_start.py) ends soon after the test's last call
os.environ["DESKTOP_MEMORY_SERVICE_IDLE_S"] = "5"


@pytest.fixture(scope="module")
def engine_in_process():
    """The CLI as with DESKTOP_MEMORY_SERVICE=off: each command opens the folder in its own process. For the
    tests about that engine itself (killed mid-write, its files damaged or compared between commands), which a
    service that outlives each command would hide. Module-wide: `pytest.mark.usefixtures("engine_in_process")`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DESKTOP_MEMORY_SERVICE", "off")
        yield


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def fake_service(data_dir: Path):
    from desktop_memory.service import MemoryService
    from tests.fakes import FakeEmbedder

    with MemoryService(data_dir, embedder=FakeEmbedder()) as service:
        yield service


@pytest.fixture(scope="session")
def real_embedder():
    from desktop_memory.engine.embed import Embedder

    return Embedder()


@pytest.fixture
def real_service(data_dir: Path, real_embedder):
    from desktop_memory.service import MemoryService

    with MemoryService(data_dir, embedder=real_embedder) as service:
        yield service
