"""The engine's local socket: the process that owns a data folder serves its engine to the app, CLI and MCP.

`server.IpcServer` runs in the host (`host.py`: the engine process the tray app starts with `spawn.py`);
`client.connect` gives a `RemoteService`; both are generated from the service protocol
(`service/protocol.MemoryOperations`), with every value encoded in `codec.py`. `lane.EngineLane` is the one
"run every engine call on one thread" (host, app, MCP), `client.host_or_local` the one "the app's engine,
else this process's", `streaming.py` an import pipelined across the chunks it arrives in. Plain Python
(multiprocessing.connection, JSON payloads), no Qt.
"""
