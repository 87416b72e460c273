"""Sync between a person's machines through a folder they already sync (issue 35): docs in sync/log.py."""
