"""The `desktop-memory` command line (a thin adapter over the service)."""
