"""llama.cpp as installed by scripts/dev.sh setup is built for every x86-64 CPU of the last decade, never for the
build machine: no AVX-512, no AMX (SIGILL elsewhere, and on a CPU that reports AMX its thread may still not use it),
and beside it a build with no AVX at all. Read from the machine code itself (objdump), so a wheel built natively
(llama.cpp's default GGML_NATIVE=ON, or one pip's wheel cache handed back) fails here on any AVX-512 machine."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from desktop_memory.assets import package_folder
from desktop_memory.engine.model_process import lib_variants

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(platform.machine() != "x86_64" or platform.system() != "Linux",
                                 reason="the x86-64 Linux build")]

AVX512_OR_AMX = re.compile(r"%zmm|%k[1-7]\b|\btile(loadd|stored|zero|release)|\btdp|\bldtilecfg")
AVX = re.compile(r"%ymm|\bv[a-z0-9]+\s+.*%xmm")  # any VEX-encoded instruction


def instructions(library: Path) -> str:
    objdump = shutil.which("objdump")
    assert objdump, "objdump is missing: bash scripts/dev.sh setup installs binutils"
    return subprocess.run([objdump, "-d", "--no-show-raw-insn", str(library)], capture_output=True, text=True,
                          check=True).stdout


def libraries(folder: Path) -> list[Path]:
    found = sorted(p for p in folder.glob("lib*.so") if p.is_file())
    assert {"libllama.so", "libggml-cpu.so"} <= {p.name for p in found}, f"no llama.cpp in {folder}"
    return found


def test_the_default_build_needs_nothing_beyond_avx2():
    folder = package_folder("llama_cpp")
    assert folder is not None
    for library in libraries(folder / "lib"):
        hits = AVX512_OR_AMX.findall(instructions(library))
        assert not hits, f"{library.name} uses AVX-512 or AMX ({len(hits)} instructions): a native build"
    assert "%ymm" in instructions(folder / "lib" / "libggml-cpu.so")  # and AVX2 is used where it helps


def test_the_second_build_runs_without_avx():
    names = dict(lib_variants())
    assert "sse42" in names, "the build for CPUs without AVX is missing: bash scripts/dev.sh setup builds it"
    folder = names["sse42"]
    assert folder is not None
    for library in libraries(folder):
        code = instructions(library)
        assert not AVX512_OR_AMX.search(code) and not AVX.search(code), f"{library.name} needs AVX"
        runpath = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True).stdout
        if "libggml" in runpath:  # it finds its own libggml beside it, never the default build's
            assert "[$ORIGIN]" in runpath
