"""Pure logic: standard library only, no I/O, no threads."""
