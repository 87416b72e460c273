"""The engine's local socket: the process that owns a data folder serves its engine to the app, CLI and MCP.

`server.IpcServer` runs in the host (`host.py`: the engine process the tray app starts with `spawn.py`);
`client.connect` gives a `RemoteService` whose methods mirror `MemoryService`. Plain Python
(multiprocessing.connection, JSON payloads), no Qt.
"""
