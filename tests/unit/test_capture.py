"""Capture decisions, secret markers, rules, bursts and the recent-captures log (pure logic)."""

from __future__ import annotations

import pytest

from desktop_memory.core.capture import (
    DEFAULT_RULES,
    OWN_MIME,
    CaptureEvent,
    CaptureLimits,
    CaptureRule,
    RecentCaptures,
    Snapshot,
    concealed_by,
    decide,
    rules_from,
)
from desktop_memory.core.coalesce import Coalescer

TEXT = "The staging deploy uses blue green switching"


def test_plain_text_is_saved():
    d = decide(Snapshot(TEXT, {"text/plain": TEXT.encode()}, app="firefox"))
    assert d.store and d.text == TEXT and d.reason == "saved"


@pytest.mark.parametrize(("formats", "reason"), [
    ({"x-kde-passwordManagerHint": b"secret"}, "password manager"),
    ({"x-kde-passwordManagerHint": b"Secret\n"}, "password manager"),
    ({'application/x-qt-windows-mime;value="ExcludeClipboardContentFromMonitorProcessing"': b""}, "password manager"),
    ({'application/x-qt-windows-mime;value="CanIncludeInClipboardHistory"': (0).to_bytes(4, "little")},
     "password manager"),
    ({"org.nspasteboard.ConcealedType": b""}, "password manager"),
    ({"org.nspasteboard.TransientType": b""}, "transient copy"),
])
def test_secret_markers_of_every_os_skip_the_copy(formats, reason):
    d = decide(Snapshot("hunter2-correct-horse", {"text/plain": b"x", **formats}))
    assert not d.store and d.reason == reason and "hunter2" not in d.reason


@pytest.mark.parametrize("formats", [
    {"x-kde-passwordManagerHint": b"public"},
    {'application/x-qt-windows-mime;value="CanIncludeInClipboardHistory"': (1).to_bytes(4, "little")},
    {"text/html": b"<b>x</b>"},
])
def test_look_alike_markers_do_not_skip(formats):
    assert concealed_by(formats) is None
    assert decide(Snapshot(TEXT, formats)).store


def test_our_own_copy_paused_off_not_text_and_limits():
    assert decide(Snapshot(TEXT, {OWN_MIME: b"1"})).reason == "our own copy"
    assert decide(Snapshot(TEXT), paused=True).reason == "paused"
    assert decide(Snapshot(TEXT), enabled=False).reason == "capture is off"
    image = decide(Snapshot(None, {"image/png": b"\x89PNG"}, kind="image"))
    assert not image.store and image.reason.startswith("not text (image)")
    assert decide(Snapshot(" ab ")).reason == "too short"
    assert decide(Snapshot("x" * 50), limits=CaptureLimits(max_chars=10)).reason == "too long"


@pytest.mark.parametrize("text", ["123456", " 482 913 ", "1234-5678", "[sudo] password for ana:", "Password:",
                                  "PIN:"])
def test_default_rules_skip_one_time_codes_and_password_prompts(text):
    d = decide(Snapshot(text))
    assert not d.store and d.reason.startswith("rule: ")


@pytest.mark.parametrize("text", ["Order 123456 shipped on Monday", "2026-11-22", "call 555 0100 about the lease",
                                  "Password reset instructions for the staging VPN are in the wiki"])
def test_default_rules_keep_ordinary_text_with_numbers_or_the_word_password(text):
    assert decide(Snapshot(text)).store


def test_default_rules_skip_password_manager_apps_and_private_windows():
    assert decide(Snapshot(TEXT, app="KeePassXC")).reason == "rule: password manager app"
    assert decide(Snapshot(TEXT, app="firefox", window="Mozilla Firefox Private Browsing")).reason == \
        "rule: private browsing window"


def test_user_rules_ignore_redact_and_tag_in_order():
    rules = rules_from([
        {"name": "customer ids", "action": "redact", "content": r"CUST-\d+"},
        {"name": "work chat", "action": "tag", "app": "slack", "tag": "#Work"},
        {"name": "banking", "action": "ignore", "window": "bank"},
    ])
    d = decide(Snapshot("Ticket for CUST-4411 is open", app="Slack"), rules=rules)
    assert d.store and d.text == "Ticket for [REDACTED:customer_ids] is open" and d.tags == ("work",)
    assert d.reason == "saved (rules: customer ids, work chat)"
    assert decide(Snapshot(TEXT, window="My Bank - statements"), rules=rules).reason == "rule: banking"
    assert not decide(Snapshot("CUST-1"), rules=rules).store  # nothing but the redacted part: too little left


@pytest.mark.parametrize(("raw", "message"), [
    ({"name": "x", "action": "delete", "content": "a"}, "action must be"),
    ({"name": "x", "action": "redact"}, "needs a content pattern"),
    ({"name": "x", "action": "tag", "app": "a"}, "needs a tag"),
    ({"name": "broken", "content": "(unclosed"}, "not a valid regular expression"),
])
def test_broken_rules_are_refused_with_a_clear_message(raw, message):
    with pytest.raises(ValueError, match=message):
        rules_from([raw])


def test_rules_round_trip_through_settings_data():
    again = rules_from([r.to_dict() for r in DEFAULT_RULES])
    assert tuple(again) == DEFAULT_RULES
    assert not CaptureRule("empty").matches(TEXT, "app", "window")  # no pattern: never matches


def test_a_burst_of_copies_becomes_the_last_one():
    c: Coalescer[str] = Coalescer(quiet_s=0.8, max_hold_s=3.0)
    for i, text in enumerate(["The sta", "The staging", "The staging deploy", TEXT]):
        c.offer(text, text, now=i * 0.1)
    assert c.release(now=0.5) is None  # still in the burst
    assert c.deadline() == pytest.approx(1.1)
    assert c.release(now=1.1) == TEXT and c.dropped == 3
    assert c.release(now=5.0) is None and c.deadline() is None


def test_a_long_stream_is_released_after_the_maximum_hold_and_repeats_are_dropped():
    c: Coalescer[str] = Coalescer(quiet_s=0.8, max_hold_s=3.0)
    t = 0.0
    while t < 3.0:
        c.offer(f"v{t:.1f}", f"v{t:.1f}", now=t)
        t += 0.5
    assert c.release(now=3.0) == "v2.5"
    c.offer("v2.5", "v2.5", now=3.1)  # the same text again
    assert c.flush() is None
    c.offer("new", "new", now=4.0)
    assert c.flush() == "new"


def test_recent_captures_never_keep_skipped_text():
    log = RecentCaptures(size=2)
    log.add(CaptureEvent(1.0, False, "password manager"))
    log.add(CaptureEvent(2.0, True, "saved", memory_id="m1", title="Deploy notes"))
    log.add(CaptureEvent(3.0, False, "too short"))
    assert [e.reason for e in log] == ["too short", "saved"] and len(log) == 2
    with pytest.raises(ValueError):
        log.add(CaptureEvent(4.0, False, "rule: banking", title="My Bank"))
