"""A CLI wrapper for ../shared/bench/locomo_eval.py that enriches every store right after its import.

    python3 ../shared/bench/locomo_eval.py --cli ".venv/bin/python bench/locomo_enriched_cli.py" [--data SUBSET]
    python3 ../shared/bench/locomo_eval.py --cli ".venv/bin/python bench/locomo_enriched_cli.py --patterns-only"

Every command goes to the real `desktop-memory` CLI unchanged; after a successful `import` it also runs
`enrich --all` on the same data folder, so the searches see enriched memories (summaries, titles and
entities in the FTS index, enriched importance in the ranking). `--patterns-only` points the data folder
at a model file that does not exist, so only the deterministic part runs (for the full split in minutes).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CLI = [str(Path(sys.executable).with_name("desktop-memory"))]


def main() -> int:
    args = sys.argv[1:]
    patterns_only = "--patterns-only" in args
    args = [a for a in args if a != "--patterns-only"]
    code = subprocess.call(CLI + args)
    if code != 0 or "import" not in args or "--data-dir" not in args:
        return code
    data = Path(args[args.index("--data-dir") + 1])
    if patterns_only:
        settings = data / "settings.json"
        current = json.loads(settings.read_text()) if settings.exists() else {}
        settings.write_text(json.dumps(current | {"llm_model_path": str(data / "no-model.gguf")}))
    done = subprocess.run(CLI + ["--data-dir", str(data), "enrich", "--all"], capture_output=True, text=True)
    print(done.stdout.strip(), file=sys.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
