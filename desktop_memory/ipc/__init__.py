"""The engine's local socket: the app that owns a data folder serves its engine to the CLI and MCP.

`server.IpcServer` runs in the host (the tray app); `client.connect` gives a `RemoteService` whose
methods mirror `MemoryService`. Plain Python (multiprocessing.connection, JSON payloads), no Qt.
"""
