"""The extension's own unit tests (extension/tests/*.test.js: reading answers, when an answer is final, the
"page changed" timer, the queue, the badge) under Node's built-in test runner, as part of the suite."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_extensions_javascript_tests_pass():
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed (scripts/dev.sh installs it)")
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "extension" / "tests").glob("*.test.js"))
    assert tests, "no extension tests found"
    run = subprocess.run([node, "--test", *tests], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "# fail 0" in run.stdout
