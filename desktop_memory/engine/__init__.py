"""I/O and heavy dependencies (SQLite, Chroma, models); no Qt."""

import os

# Nothing leaves the machine: third-party telemetry is switched off before any of those libraries loads.
# ONNX Runtime >= 1.29 sends usage events from its native code on Linux and macOS unless this is set
# (seen by tests/integration/test_no_network.py as DNS lookups of mobile.events.data.microsoft.com).
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
os.environ["ANONYMIZED_TELEMETRY"] = "False"  # Chroma
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_OFFLINE"] = "1"  # models load from installed packages, never from a hub
