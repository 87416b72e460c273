"""The browser companion in the engine: a `WebCapture` (core/web.py) saved or skipped, with the reason.

The extension reads the page and the native host (desktop_memory/browser/host.py) passes what it read on; here
the engine decides, as for a copy (service/capture.py): a private window is never stored, the capture rules
(matched on the text, the assistant or site as the app, the page's title and address as the window), the pause
(an exchange is captured automatically, so the app's pause and capture being off stop it; a selection or page
the person asked for is not stopped) and the secrets (redacted by the ingest path). An exchange is stored with
its identity and conversation (`Importer.store_one`): the same turn with another answer replaces the stored text,
kept as a version.

While the engine cannot be reached the host keeps captures in an encrypted spool (browser/spool.py): sealed with
the public key this component writes beside it, opened here with the private key from the OS keyring, and stored
when the engine next runs (`open_spool`, at the engine host's start). Nothing here is logged above debug but
counts.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.capture import CaptureResult, Snapshot
from ..core.models import Memory
from ..core.web import WebCapture
from . import capture
from .ingest import Prepared
from .reports import AddResult

if TYPE_CHECKING:
    from .importing import Importer

log = logging.getLogger(__name__)
PRIVATE = "a private window: never captured"
SPOOL_KEY = "browser-spool-key:"  # + the spool's key id: the X25519 private key (hex) in the OS keyring


class WebCaptures:
    """Captures from the browser (the operations `capture_web`, `pause_capture`, `capture_paused_until`)."""

    def __init__(self, folder: Path, importer: Importer) -> None:
        self.folder = folder
        self.importer = importer
        self._paused_until: float | None = None

    @property
    def ingest(self):  # noqa: ANN201 - the importer's (settings and store follow reopen and save)
        return self.importer.ingest

    # -- pause (the app's: it says so whenever it changes) --------------------------------------
    def pause_capture(self, until: float | None) -> None:
        """Automatic capture paused until `until` (epoch seconds; core/web.UNTIL_RESUMED: until resumed); None
        resumes."""
        self._paused_until = None if until is None or not math.isfinite(until) or until <= time.time() else until

    def capture_paused_until(self) -> float | None:
        if self._paused_until is not None and self._paused_until <= time.time():
            self._paused_until = None
        return self._paused_until

    # -- one capture ------------------------------------------------------------------------------
    def capture_web(self, item: WebCapture) -> CaptureResult:
        """Decide on one capture from the browser and store it when it passes; the answer says which and why."""
        if item.private:
            return CaptureResult.skipped(PRIVATE)
        window = " - ".join(part for part in (item.title.strip(), item.url.strip()) if part)
        snap = Snapshot(item.content(), app=item.source_app, window=window, automatic=item.kind == "exchange",
                        paused=self.capture_paused_until() is not None, at=item.at)
        metadata = {"capture": item.kind, "site": item.site.strip().lower()}
        if item.browser:
            metadata["browser"] = item.browser
        if item.external_id:
            metadata["external_id"] = item.external_id
        title = item.title  # a selection's title is its own first line (as for a copy); its page's is kept
        if item.kind == "selection":
            title = ""
            if item.title.strip():
                metadata["page_title"] = item.title.strip()
        fields = {"source": "browser", "title": title, "metadata": metadata, "source_url": item.url}

        def store(memory: Memory, counts: dict[str, int]) -> AddResult:
            if item.kind == "exchange":  # its identity and conversation: a new answer to the same turn, a version
                return self.importer.store_one(Prepared(0, memory, counts, session=item.session,
                                                        external_id=item.external_id))
            return self.ingest.store_prepared(memory, counts)

        return capture.capture(snap, self.ingest.settings, self.ingest.prepare, store, fields)

    # -- the spool --------------------------------------------------------------------------------
    @property
    def spool_folder(self) -> Path:
        return self.folder / "spool"

    def open_spool(self, create: bool = False) -> int:
        """Make sure the host can seal captures for this engine (a key pair: the public half beside the spool,
        the private half in the OS keyring), then store what the host kept meanwhile; how many were decided.
        A file that cannot be opened (damaged, sealed for a key this keyring does not hold) is set aside in
        spool/unreadable, never deleted."""
        from ..browser import spool

        if not create and not spool.spool_dir(self.folder).is_dir():
            return 0
        private = self._private_key(spool)
        spool.clear_parts(self.folder)
        decided = 0
        for path in spool.pending(self.folder):
            try:
                message = spool.open_file(path, private)
                item = WebCapture.from_dict(message.get("capture"))
            except ValueError as exc:
                log.warning("a spooled browser capture cannot be read (%s): set aside", exc)
                aside = spool.spool_dir(self.folder) / "unreadable"
                aside.mkdir(mode=0o700, exist_ok=True)
                path.replace(aside / path.name)
                continue
            self.capture_web(item)  # stored or skipped (a rule, a secret): either way it is decided
            path.unlink()
            decided += 1
        if decided:
            log.info("%d browser capture(s) kept while the engine was away: decided now", decided)
        return decided

    def _private_key(self, spool) -> bytes:  # noqa: ANN001 - browser/spool.py, imported on first use
        """The spool's private key from the OS keyring, made (and its public half published) when missing."""
        from ..engine import keys

        key_id = spool.key_id(self.folder)
        private_hex = keys.get_secret(SPOOL_KEY + key_id) if key_id else None
        if private_hex is not None:
            try:
                private = bytes.fromhex(private_hex)
                public = spool.public_of(private)
            except ValueError:
                private = b""
            if private:
                if spool.public_key(self.folder) != public:
                    spool.write_public_key(self.folder, public)  # missing or replaced: published again
                return private
        private, public = spool.new_keypair()
        key_id = secrets.token_hex(8)
        keys.set_secret(SPOOL_KEY + key_id, private.hex())
        spool.write_key_id(self.folder, key_id)  # the id first: a published key is always one we can open
        spool.write_public_key(self.folder, public)
        return private
