"""What the command line loads before it knows the command (issue 17: the CLI's cold start)."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_cli_loads_the_engine_only_when_it_opens_one():
    """Parsing a command and reaching a running app need no engine: the service facade (and numpy, the
    embedder, the store) load when a command opens the data folder in this process."""
    code = ("import sys, json; import desktop_memory.cli.main as m; "
            "print(json.dumps([n for n in ('desktop_memory.service.facade', 'desktop_memory.engine.embed', "
            "'desktop_memory.engine.store', 'numpy') if n in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_opening_the_engine_for_a_search_leaves_the_redaction_rules_uncompiled():
    """The redaction rules (~50 regular expressions, compiled when their module loads) are needed to store a
    text, not to search: a search's `search x` cold start does not pay for them."""
    code = ("import sys, json; import desktop_memory.service.facade; "
            "print(json.dumps([n for n in ('desktop_memory.core.redact', 'desktop_memory.core.redact_rules') "
            "if n in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
