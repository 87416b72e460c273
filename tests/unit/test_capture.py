"""Capture decisions, secret markers, rules, bursts and the recent-captures log (pure logic)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop_memory.core.capture import (
    DEFAULT_RULES,
    OWN_MIME,
    SETTINGS_DAMAGED,
    CaptureEvent,
    CaptureLimits,
    CaptureResult,
    CaptureRule,
    RecentCaptures,
    Snapshot,
    build_rules,
    concealed_by,
    decide,
    judge,
    looks_like_password,
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


# -- the engine's decision on plain data (issue 17: the app sends a snapshot once, the engine decides) ----------


def _judge(snap: Snapshot, **kw):
    return judge(snap, rules=kw.pop("rules", DEFAULT_RULES), **kw)


def test_pause_and_capture_off_stop_the_watcher_only():
    watched = Snapshot(TEXT, automatic=True, paused=True)
    assert _judge(watched).reason == "paused"
    assert _judge(Snapshot(TEXT, automatic=True), capture_enabled=False).reason == "capture is off"
    for explicit in (Snapshot(TEXT, paused=True), Snapshot(TEXT, source="hotkey", paused=True)):
        assert _judge(explicit, capture_enabled=False).store  # Capture now and the hotkeys are explicit


def test_damaged_settings_stop_every_capture_and_empty_text_is_told_apart():
    for snap in (Snapshot(TEXT), Snapshot(TEXT, automatic=True)):
        assert _judge(snap, settings_problem="settings.json is damaged (x)").reason == SETTINGS_DAMAGED
    assert _judge(Snapshot("   \n\t")).reason == "empty"
    assert CaptureResult.skipped("empty").message == "Nothing saved: the clipboard holds no text"
    assert _judge(Snapshot(" ab ")).reason == "too short"


def test_markers_rules_and_limits_apply_in_the_engine_order():
    marked = Snapshot(TEXT, {"x-kde-passwordManagerHint": b"secret"}, automatic=True)
    assert _judge(marked).reason == "password manager"
    assert _judge(Snapshot(TEXT, {OWN_MIME: b"1"})).reason == "our own copy"
    assert _judge(Snapshot("y" * 11), limits=CaptureLimits(max_chars=10)).reason == "too long"
    rules = build_rules(disabled_defaults=["one-time code"], rules=[{"name": "ids", "action": "redact",
                                                                     "content": r"ID-\d+"}],
                        ignore_patterns=[r"^ticket-\d+$"], ignore_apps=["Signal"])
    assert [r.name for r in rules][-3:] == ["ids", "ignore text 1", "ignore app Signal"]
    assert "one-time code" not in [r.name for r in rules]
    assert _judge(Snapshot("482913"), rules=rules).store
    assert _judge(Snapshot("ticket-42"), rules=rules).reason == "rule: ignore text 1"
    assert _judge(Snapshot(TEXT, app="signal"), rules=rules).reason == "rule: ignore app Signal"
    d = _judge(Snapshot("case ID-77 is closed"), rules=rules)
    assert d.store and d.text == "case [REDACTED:ids] is closed"


def test_a_broken_rule_in_settings_data_is_refused_not_dropped():
    with pytest.raises(ValueError, match="not a valid regular expression"):
        build_rules(ignore_patterns=["(unclosed"])


@pytest.mark.parametrize(("redacted", "count", "secret"), [
    ("[REDACTED:github_token]", 1, True),
    ("password: [REDACTED:secret_assignment]", 1, True),
    ("deploy with token [REDACTED:github_token] today", 1, False),
    ("ok", 0, False),
])
def test_password_like_text_is_what_is_left_beside_placeholders(redacted, count, secret):
    assert looks_like_password(redacted, count) is secret


def test_snapshots_travel_as_plain_json_data():
    snap = Snapshot("hello there friend", {"x-kde-passwordManagerHint": b"secret", OWN_MIME: b"\x00\xff"},
                    app="kate", window="notes.txt", source="hotkey", automatic=False, paused=True, at=1_800_000_000.5)
    again = Snapshot.from_dict(json.loads(json.dumps(snap.to_dict())))
    assert again == snap and _judge(again).reason == "our own copy"
    assert Snapshot.from_dict({"text": "x"}).at is None  # an older front end: the engine's clock
    assert [Snapshot.from_dict({"text": "x", "at": v}).at for v in ("soon", True, [1], None, 7)] == [None] * 4 + [7.0]
    result = CaptureResult.saved("extended", "m1", "Deploy", 2)
    assert CaptureResult.from_dict(json.loads(json.dumps(result.to_dict()))) == result
    assert result.message == "Saved (extends the previous copy; the earlier text is kept) (2 secrets redacted)"
    event = result.event(5.0, app="kate")
    assert event.stored and event.memory_id == "m1" and event.title == "Deploy"


@pytest.mark.parametrize("raw", [
    None, [], "text", {"text": 5}, {"text": "x", "formats": []}, {"text": "x", "formats": {"a": "!!notb64"}},
    {"text": "x", "formats": {"a": 1}}, {"text": "x", "automatic": "yes"}, {"text": "x", "app": 3},
    {"text": "x", "source": "import"}, {"text": "x", "formats": {str(i): "" for i in range(40)}},
    {"text": "x", "formats": {"a": "QQ==" * 5000}},
])
def test_wrong_snapshot_data_is_one_line_value_error(raw):
    with pytest.raises(ValueError) as info:
        Snapshot.from_dict(raw)
    assert "\n" not in str(info.value)


@given(st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20),
                                                       st.dictionaries(st.text(max_size=5), st.text(max_size=8)))))
def test_any_json_object_is_a_snapshot_or_a_value_error(raw):
    try:
        snap = Snapshot.from_dict(raw)
    except ValueError:
        return
    _judge(snap)  # whatever it holds, a decision comes back
