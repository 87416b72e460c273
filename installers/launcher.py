"""The frozen app's entry point: the same `desktop-memory` command line as the installed package."""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["model-worker"]:  # the local model's own process (engine/model_worker.py), kept lean
        from desktop_memory.engine.model_worker import main as worker

        sys.exit(worker())
    from desktop_memory.cli.main import main

    sys.exit(main())
