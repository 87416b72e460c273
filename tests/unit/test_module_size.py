"""Issue 17's bounds, kept: no module over 500 lines, the service facade under 300."""

from __future__ import annotations

from pathlib import Path

import desktop_memory

PACKAGE = Path(desktop_memory.__file__).parent


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_500_lines() -> None:
    over = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := lines(p)) > 500}
    assert not over, f"split these by responsibility: {over}"


def test_the_service_facade_stays_under_300_lines() -> None:
    assert lines(PACKAGE / "service" / "facade.py") < 300
