"""The layers of desktop_memory/, enforced by walking every module's imports (issue 17).

Every import counts: at the top, inside functions and under `if TYPE_CHECKING:` (a type-only import
still ties one layer to another). The rules:

- core/ uses only the standard library and core/ itself (pure logic, no I/O libraries).
- engine/ never imports service, ipc, qt, cli, mcp, capture or smoke (it is called, it never calls up).
- service/ never imports ipc, qt, cli, mcp or smoke (the front ends and the socket sit on top of it).
- Only desktop_memory/qt imports PySide6 (or shiboken6).
- The storage and model libraries (apsw, chromadb, llama_cpp, onnxruntime, torch, ...) are imported in
  engine/ only: whoever else touches them reaches into the engine's internals.
- The front ends (cli, mcp, qt, smoke) use core/, the service (its protocol) and ipc; of engine/ only
  the modules in FRONT_END_ENGINE_ALLOWED.
- Only engine/ runs SQL: no `.execute(` / `.executemany(` and no store's `.db` outside it (the service
  asks the Store for what it needs).

Not covered: imports by string (`importlib.import_module("...")`, PyInstaller hidden imports).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2] / "desktop_memory"

FRONT_ENDS = ("cli", "mcp", "qt", "smoke")
ENGINE_MUST_NOT = ("service", "ipc", "qt", "cli", "mcp", "capture", "smoke")
SERVICE_MUST_NOT = ("ipc", "qt", "cli", "mcp", "smoke")
QT_LIBRARIES = ("PySide6", "shiboken6")
ENGINE_LIBRARIES = ("apsw", "chromadb", "llama_cpp", "onnxruntime", "torch", "transformers", "sentence_transformers",
                    "tokenizers", "hnswlib")

# What a front end may use of engine/, and why. Keep it short: anything else goes through the service.
FRONT_END_ENGINE_ALLOWED = {
    "engine.settings": "Settings is the value the service's settings operations take and return",
    "engine.records": "the fields of a memory as the service accepts them: front ends parse arguments and "
                      "import lines with the same rules (importance_arg, read_lines, Overlong, Pinned, Tags)",
    "engine.failures": "the front ends' error barriers turn a raw storage failure into its one-line StorageError",
    "engine.session_env": "environment defaults for the process (XDG_RUNTIME_DIR, D-Bus), applied once at start-up",
    "engine.outputs": "where a file may be written (never into the data folder): setup-mcp writes the AI apps' "
                      "files and bundles itself, refused there by the rule export and backup use (paths only)",
}

# Crossings known and still to be removed (none since issue 17). The test fails when a crossing NOT listed
# here appears, and when one listed here is gone (delete its line then): the set only shrinks.
KNOWN_VIOLATIONS: set[tuple[str, str]] = set()


class Violation(NamedTuple):
    importer: str  # module path inside the package, e.g. "engine.backup"
    imported: str  # e.g. "service.facade" inside the package, or a top-level library name
    rule: str


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_internal_module(root: Path, dotted: str) -> bool:
    base = root.joinpath(*dotted.split(".")) if dotted else root
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve(node: ast.ImportFrom, importer: str, is_package: bool, root: Path) -> list[str]:
    """Absolute names a `from ... import ...` refers to; inside the package, without its name."""
    if node.level == 0:
        return [node.module or ""]
    package = importer.split(".") if importer else []
    if not is_package:
        package = package[:-1]
    package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
    base = ".".join(package + ([node.module] if node.module else []))
    names = []
    for alias in node.names:  # `from . import store` names a module; `from .store import Store` does not
        sub = f"{base}.{alias.name}" if base else alias.name
        names.append(sub if _is_internal_module(root, sub) else base)
    return [f"{root.name}.{n}" if n else root.name for n in names]


def imports(root: Path) -> dict[str, set[str]]:
    """Every module of the package at `root` -> the modules it imports (anywhere in the file)."""
    found: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        importer = _module_name(path, root)
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                names.update(_resolve(node, importer, path.name == "__init__.py", root))
        found[importer] = names
    return found


def _layer(module: str) -> str:
    return module.split(".")[0]


def _internal(name: str, package: str) -> str | None:
    """`engine.store` for `desktop_memory.engine.store`; None for a module outside the package."""
    if name == package:
        return ""
    return name[len(package) + 1:] if name.startswith(package + ".") else None


def _check(importer: str, name: str, package: str) -> list[Violation]:
    layer, inside, top = _layer(importer), _internal(name, package), name.split(".")[0]
    found = []
    if inside is None:
        if layer == "core" and top not in sys.stdlib_module_names:
            found.append(Violation(importer, top, "core uses only the standard library"))
        if top in QT_LIBRARIES and layer != "qt":
            found.append(Violation(importer, top, "only desktop_memory/qt imports PySide6"))
        if top in ENGINE_LIBRARIES and layer != "engine":
            found.append(Violation(importer, top, "storage and model libraries are the engine's"))
        return found
    target = _layer(inside) if inside else ""
    if layer == "core" and target not in ("core", ""):
        found.append(Violation(importer, inside, "core imports only core"))
    if layer == "engine" and target in ENGINE_MUST_NOT:
        found.append(Violation(importer, inside, "engine never imports the layers above it"))
    if layer == "service" and target in SERVICE_MUST_NOT:
        found.append(Violation(importer, inside, "service never imports ipc or front ends"))
    if layer in FRONT_ENDS and target == "engine" and _engine_module(inside) not in FRONT_END_ENGINE_ALLOWED:
        found.append(Violation(importer, _engine_module(inside), "front ends use the service, not engine internals"))
    return found


def _engine_module(inside: str) -> str:
    return ".".join(inside.split(".")[:2])


def sql_outside_engine(root: Path) -> list[str]:
    """`module:line` of every SQL call (`.execute`, `.executemany`) or `.db` use outside engine/."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        if _layer(module) == "engine":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Attribute) and node.attr in ("execute", "executemany", "db"):
                found.append(f"{module}:{node.lineno} .{node.attr}")
    return found


def violations(root: Path) -> list[Violation]:
    """Every import in the package at `root` that crosses a layer boundary."""
    package = root.name
    out = []
    for importer, names in imports(root).items():
        for name in sorted(names):
            out.extend(_check(importer, name, package))
    return out


# -- the checker fails on crafted violations --------------------------------------------------------
def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "fakepkg"
    for rel, text in {**files, "__init__.py": "", "core/__init__.py": "", "engine/__init__.py": "",
                      "service/__init__.py": "", "cli/__init__.py": "", "qt/__init__.py": "",
                      "mcp/__init__.py": ""}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        if not (root / rel).exists():
            (root / rel).write_text(text, encoding="utf-8")
    return root


CLEAN = {
    "core/text.py": "import re\nfrom dataclasses import dataclass\nfrom . import errors\nfrom .errors import E\n",
    "core/errors.py": "class E(Exception): ...\n",
    "engine/store.py": "import apsw\nfrom ..core.text import dataclass\nfrom . import settings\n",
    "engine/settings.py": "import json\n",
    "service/facade.py": "from ..engine.store import Store\nfrom ..core import text\n",
    "cli/main.py": "from ..service import facade\nfrom ..engine.settings import X\nfrom ..engine import failures\n",
    "engine/failures.py": "",
    "qt/app.py": "from PySide6.QtCore import QObject\nfrom ..service.facade import S\n",
}


def test_a_clean_package_passes(tmp_path):
    assert violations(_fake_package(tmp_path, CLEAN)) == []


@pytest.mark.parametrize(("rel", "text", "expected"), [
    ("core/bad.py", "import numpy\n", ("core.bad", "numpy")),
    ("core/bad.py", "def f():\n    from ..engine import store\n", ("core.bad", "engine.store")),
    ("engine/bad.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..service.facade import S\n",
     ("engine.bad", "service.facade")),
    ("engine/bad.py", "def f():\n    from .. import cli\n", ("engine.bad", "cli")),
    ("engine/bad.py", "import fakepkg.qt.app\n", ("engine.bad", "qt.app")),
    ("cli/bad.py", "def f():\n    import PySide6.QtWidgets\n", ("cli.bad", "PySide6")),
    ("service/bad.py", "from PySide6 import QtCore\n", ("service.bad", "PySide6")),
    ("service/bad.py", "from ..cli.main import x\n", ("service.bad", "cli.main")),
    ("cli/bad.py", "from ..engine.store import Store\n", ("cli.bad", "engine.store")),
    ("mcp/bad.py", "from ..engine import store\n", ("mcp.bad", "engine.store")),
    ("qt/bad.py", "from chromadb.api.shared_system_client import SharedSystemClient\n", ("qt.bad", "chromadb")),
])
def test_the_checker_reports_a_crafted_violation(tmp_path, rel, text, expected):
    found = violations(_fake_package(tmp_path, {**CLEAN, rel: text}))
    assert [(v.importer, v.imported) for v in found] == [expected]


def test_the_sql_checker_reports_sql_outside_the_engine(tmp_path):
    root = _fake_package(tmp_path, {**CLEAN, "service/stats.py": "def n(s):\n    return s.store.db.execute('x')\n",
                                    "engine/ok.py": "def n(db):\n    return db.execute('x')\n"})
    assert sql_outside_engine(root) == ["service.stats:2 .execute", "service.stats:2 .db"]


# -- the real tree -----------------------------------------------------------------------------------
def test_only_the_engine_runs_sql():
    assert sql_outside_engine(ROOT) == []


def test_the_layers_hold():
    found = {(v.importer, v.imported): v.rule for v in violations(ROOT)}
    new = {f"{a} -> {b}: {rule}" for (a, b), rule in found.items() if (a, b) not in KNOWN_VIOLATIONS}
    gone = {f"{a} -> {b}" for a, b in KNOWN_VIOLATIONS if (a, b) not in found}
    assert not new, "imports crossing a layer boundary:\n" + "\n".join(sorted(new))
    assert not gone, "no longer a violation, remove it from KNOWN_VIOLATIONS:\n" + "\n".join(sorted(gone))


def test_the_allow_list_is_short_and_real():
    assert len(FRONT_END_ENGINE_ALLOWED) <= 5
    assert all(_is_internal_module(ROOT, name) for name in FRONT_END_ENGINE_ALLOWED)
