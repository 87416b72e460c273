"""The local model on CPUs this project does not have: the model worker runs under QEMU user-mode emulation as an
older x86-64 CPU (Debian's qemu-user), started by the real `WorkerModel` with the real llama.cpp builds and the
bundled GGUF. `model verify`'s sample and one enrichment must work (on the build for CPUs without AVX where the
default one needs AVX2), never die of an illegal instruction."""

from __future__ import annotations

import shutil
import sys

import pytest

from desktop_memory.core.enrich import DETERMINISTIC
from desktop_memory.engine import model_process
from desktop_memory.engine.enrichment import enrich_text
from desktop_memory.engine.llm import check_model
from desktop_memory.engine.model_process import WorkerModel

pytestmark = [pytest.mark.integration, pytest.mark.slow,
              pytest.mark.skipif(sys.platform != "linux", reason="QEMU user-mode emulation runs Linux binaries")]
QEMU = shutil.which("qemu-x86_64")
SAMPLE = "Decision: Priya ships the beta release of Atlas in Berlin on March 3rd."
NOTE = "Flight LH 1172 from Munich lands in Lisbon at 18:05 on Saturday; Omar picks us up at the airport."

CPUS = [  # (QEMU's CPU model, what it lacks, the llama.cpp build that must run there)
    ("Nehalem", "AVX", "sse42"),
    ("SandyBridge", "AVX2, FMA and F16C", "sse42"),
    ("Haswell", "AVX-512 and AMX", "default"),
]


def test_qemu_is_there():
    """The tier's tool: installed by scripts/dev.sh setup (never a silent skip of the tier below)."""
    assert QEMU, "qemu-x86_64 is missing: bash scripts/dev.sh setup installs qemu-user"
    assert [name for name, _ in model_process.lib_variants()] == ["default", "sse42"], \
        "the build for CPUs without AVX is missing: bash scripts/dev.sh setup builds it"


@pytest.mark.parametrize(("cpu", "lacks", "build"), CPUS, ids=[c[0] for c in CPUS])
def test_the_model_runs_on_an_older_cpu(cpu: str, lacks: str, build: str, monkeypatch):
    assert QEMU
    monkeypatch.setitem(model_process._variant, "index", 0)  # this process has not chosen yet
    command = [QEMU, "-cpu", cpu, sys.executable, "-m", "desktop_memory.engine.model_worker"]
    model = WorkerModel(check_model(None), n_ctx=1024, n_threads=2, command=command, silence_s=600, load_s=900)
    try:
        sample = enrich_text(SAMPLE, model=model, n_ctx=1024)  # what `model verify` runs
        assert model.variant == build, f"{cpu} lacks {lacks}: expected the {build!r} build, ran {model.variant!r}"
        assert sample.by != DETERMINISTIC and {"Priya", "Berlin"} <= {e["text"] for e in sample.entities}
        note = enrich_text(NOTE, model=model, n_ctx=1024)  # and one enrichment
        assert note.by != DETERMINISTIC and any(e["text"] == "Lisbon" for e in note.entities)
    finally:
        model.unload()
