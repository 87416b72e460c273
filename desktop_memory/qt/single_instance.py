"""One app per data folder: a local socket that a second start (or `desktop-memory toggle`) talks to."""

from __future__ import annotations

import getpass
import hashlib
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

COMMANDS = ("show", "toggle", "capture", "selection", "ping")
TIMEOUT_MS = 1500


def server_name(data_dir: Path) -> str:
    """A socket name private to this user and data folder (short enough for every OS)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    digest = hashlib.sha256(f"{user}\0{Path(data_dir).resolve()}".encode()).hexdigest()[:16]
    return f"desktop-memory-{digest}"


def send_command(name: str, command: str, timeout_ms: int = TIMEOUT_MS) -> bool:
    """Ask the running app to do `command`; False when no app answers."""
    sock = QLocalSocket()
    sock.connectToServer(name)
    if not sock.waitForConnected(timeout_ms):
        return False
    sock.write(command.encode("ascii") + b"\n")
    sock.waitForBytesWritten(timeout_ms)
    answered = sock.waitForReadyRead(timeout_ms) and bytes(sock.readAll().data()).strip() == b"ok"
    sock.disconnectFromServer()
    return answered


class InstanceServer(QObject):
    """Listens for commands from later starts; each one arrives as `command_received`."""

    command_received = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)

    def listen(self) -> bool:
        """Take the name (removing a socket left by a crashed app); False if that fails."""
        QLocalServer.removeServer(self.name)
        return self._server.listen(self.name)

    def error(self) -> str:
        return self._server.errorString()

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while (sock := self._server.nextPendingConnection()) is not None:
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(sock.deleteLater)

    def _read(self, sock: QLocalSocket) -> None:
        if not sock.canReadLine():
            return
        command = bytes(sock.readLine().data()).decode("ascii", "replace").strip()
        if command in COMMANDS:
            sock.write(b"ok\n")
            sock.flush()
            if command != "ping":
                self.command_received.emit(command)
        else:
            sock.write(b"unknown command\n")
            sock.flush()
