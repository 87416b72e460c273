"""Windows' clipboard secret markers as Qt reports them: which combinations skip a copy (issue 18).

`Clipboard Viewer Ignore` and `ExcludeClipboardContentFromMonitorProcessing` skip when present (any data);
`CanIncludeInClipboardHistory` and `CanUploadToCloudClipboard` skip only when their DWORD is 0. Qt on
Windows names a registered format it has no converter for `application/x-qt-windows-mime;value="<name>"`.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_memory.core.capture import MARKER_FORMATS, Snapshot, concealed_by, decide, format_name

TEXT = "The staging deploy uses blue green switching"
PRESENCE = ("Clipboard Viewer Ignore", "ExcludeClipboardContentFromMonitorProcessing")
DWORDS = ("CanIncludeInClipboardHistory", "CanUploadToCloudClipboard")


def qt_name(name: str) -> str:
    return f'application/x-qt-windows-mime;value="{name}"'


def dword(value: int) -> bytes:
    return value.to_bytes(4, "little")


def test_every_windows_marker_is_asked_of_qt():
    for name in (*PRESENCE, *DWORDS):
        assert name in MARKER_FORMATS
        assert any(w in qt_name(name) for w in MARKER_FORMATS)  # capture_now.snapshot keeps it
        assert format_name(qt_name(name)) == name


@pytest.mark.parametrize("name", PRESENCE)
@pytest.mark.parametrize("data", [b"", b"\0", b"\x01\0\0\0", b"anything"])
def test_presence_markers_skip_whatever_their_data(name, data):
    assert concealed_by({qt_name(name): data}) == "password manager"
    assert not decide(Snapshot(TEXT, {"text/plain": TEXT.encode(), qt_name(name): data})).store


@pytest.mark.parametrize("name", DWORDS)
def test_dword_markers_skip_only_at_zero(name):
    assert concealed_by({qt_name(name): dword(0)}) == "password manager"
    assert concealed_by({name: dword(0)}) == "password manager"  # unwrapped (another front end)
    assert concealed_by({qt_name(name): dword(1)}) is None
    assert concealed_by({qt_name(name): b""}) is None  # no DWORD: not a "no"
    assert concealed_by({qt_name(name): b"\0\0"}) is None
    assert concealed_by({qt_name(name): dword(0x100)}) is None
    assert concealed_by({qt_name(name): dword(0) + b"\xff\xff"}) == "password manager"  # GlobalSize rounds up


def test_look_alike_names_do_not_skip():
    for name in ("Clipboard Viewer", "CanUploadToCloud", "ExcludeClipboardContent", "clipboard viewer ignore"):
        assert concealed_by({qt_name(name): b""}) is None


_marker = st.one_of(
    st.tuples(st.sampled_from(PRESENCE), st.binary(max_size=8)),
    st.tuples(st.sampled_from(DWORDS), st.one_of(st.integers(0, 2**32 - 1).map(dword), st.binary(max_size=3))),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_marker, max_size=4), st.booleans(), st.lists(st.text(min_size=1, max_size=12), max_size=3))
def test_any_combination_skips_exactly_when_one_marker_says_so(markers, wrapped, noise):
    formats = {f"text/x-{n}": b"x" for n in noise}
    for name, data in markers:
        formats[qt_name(name) if wrapped else name] = data
    by_name = {format_name(k): v for k, v in formats.items()}
    secret = any(n in by_name for n in PRESENCE) or any(
        n in by_name and len(by_name[n]) >= 4 and int.from_bytes(by_name[n][:4], "little") == 0 for n in DWORDS)
    assert (concealed_by(formats) == "password manager") is secret
    assert decide(Snapshot(TEXT, formats)).store is not secret


def test_the_app_takes_the_markers_from_qt_mime_data():
    """qt/capture_now.snapshot keeps the Windows markers under Qt's names (and only the markers)."""
    qtcore = pytest.importorskip("PySide6.QtCore")
    from desktop_memory.qt.capture_now import snapshot

    mime = qtcore.QMimeData()
    mime.setText(TEXT)
    mime.setData(qt_name("Clipboard Viewer Ignore"), b"")
    mime.setData(qt_name("CanUploadToCloudClipboard"), dword(0))
    mime.setData(qt_name("Rich Text Format"), b"{\\rtf1 hello}")
    snap = snapshot(mime, "notepad", "notes.txt - Notepad")
    assert {format_name(k) for k in snap.formats} == {"Clipboard Viewer Ignore", "CanUploadToCloudClipboard"}
    assert not decide(snap).store
