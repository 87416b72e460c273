"""Windows DLLs through ctypes, loaded on first use with their prototypes set (never at import: Linux imports
the Windows modules for their tests, which put fakes in each module's cache)."""

from __future__ import annotations

import ctypes
from collections.abc import Mapping, MutableMapping
from typing import Any


def load(name: str, prototypes: Mapping[str, Mapping[str, tuple[Any, list[Any]]]],
         cache: MutableMapping[str, Any]) -> Any:
    """The DLL `name` with `prototypes[name]` (function -> (restype, argtypes)) set, kept in `cache`."""
    if name not in cache:
        lib = ctypes.WinDLL(name, use_last_error=True)  # type: ignore[attr-defined]  # Windows only
        for fn, (restype, argtypes) in prototypes[name].items():
            f = getattr(lib, fn)
            f.restype, f.argtypes = restype, argtypes
        cache[name] = lib
    return cache[name]
