#!/usr/bin/env bash
# Run a command inside a throw-away desktop session (see ../shared/design/PLATFORM.md):
# a real X server (Xvfb), a D-Bus session, an unlocked Secret Service keyring (gnome-keyring)
# and a system tray host (trayer), with fresh XDG folders. Everything it starts is stopped at the
# end and the command's exit code is passed through.
#   bash scripts/with-desktop.sh COMMAND [ARGS...]
# DESKTOP_TIMEOUT (seconds, default 3000) bounds the whole session.
set -euo pipefail
if [ $# -eq 0 ]; then
    echo "usage: $0 COMMAND [ARGS...]" >&2
    exit 2
fi

if [ -z "${DESKTOP_MEMORY_DESKTOP_SESSION:-}" ]; then
    for tool in xvfb-run dbus-run-session gnome-keyring-daemon trayer; do
        command -v "$tool" >/dev/null || { echo "$0: $tool is missing (bash scripts/dev.sh setup installs it)" >&2; exit 1; }
    done
    export DESKTOP_MEMORY_DESKTOP_SESSION=1
    session=$(mktemp -d "${TMPDIR:-/tmp}/desktop-session.XXXXXX")
    export DESKTOP_MEMORY_SESSION_DIR="$session"
    mkdir -p "$session/data" "$session/cache" "$session/config" "$session/runtime" "$session/services"
    chmod 700 "$session/runtime"
    # The keyring, started unlocked, and started again the same way by the bus should it end: the bus's own
    # activation file would start a locked one (an invisible prompt, every secret refused).
    cat >"$session/keyring.sh" <<KEYRING
#!/usr/bin/env bash
export XDG_DATA_HOME="$session/data" XDG_CACHE_HOME="$session/cache" XDG_CONFIG_HOME="$session/config"
export XDG_RUNTIME_DIR="$session/runtime"
echo "with-desktop: keyring daemon started (\$(date +%T))" >>"$session/keyring.log"
exec gnome-keyring-daemon --foreground --unlock --components=secrets --control-directory="$session/runtime/keyring" \\
    < <(printf '%s' "throwaway") >>"$session/keyring.log" 2>&1
KEYRING
    printf '[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/bin/bash %s/keyring.sh\n' "$session" \
        >"$session/services/org.freedesktop.secrets.service"
    # the session bus's standard configuration, this session's services looked up first
    cat >"$session/bus.conf" <<BUS
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <servicedir>$session/services</servicedir>
  <include>/usr/share/dbus-1/session.conf</include>
</busconfig>
BUS
    # xvfb-run stops its X server when the session ends; dbus-run-session stops its bus.
    rc=0
    timeout --kill-after=20 "${DESKTOP_TIMEOUT:-3000}" \
        xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session --config-file="$session/bus.conf" -- \
        bash "$0" "$@" || rc=$?
    rm -rf "$session"
    exit "$rc"
fi

# -- inside the X server and the D-Bus session -------------------------------------------------
session="$DESKTOP_MEMORY_SESSION_DIR"
export XDG_DATA_HOME="$session/data" XDG_CACHE_HOME="$session/cache" XDG_CONFIG_HOME="$session/config"
export XDG_RUNTIME_DIR="$session/runtime"
started=()

cleanup() {
    for pid in "${started[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${started[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    # a keyring daemon the bus started again (after the first one ended) is stopped with the bus; say why
    if [ "$(grep -c '^with-desktop: keyring daemon started' "$session/keyring.log" 2>/dev/null)" -gt 1 ]; then
        echo "with-desktop: the keyring daemon ended during the session and was started again; its log:" >&2
        tail -n 40 "$session/keyring.log" >&2
    fi
}
trap cleanup EXIT

# A fresh keyring unlocked with a throw-away password (a reused one would open an invisible prompt).
bash "$session/keyring.sh" &
started+=($!)
trayer --edge top --align right --widthtype request --height 24 --SetDockType true \
    --transparent true --alpha 0 >"$session/trayer.log" 2>&1 &
started+=($!)
# Wait (bounded, 30 s: a loaded machine is slow) until both are up: the keyring's control socket and
# the tray's window.
for _ in $(seq 300); do
    [ -S "$XDG_RUNTIME_DIR/keyring/control" ] && break
    sleep 0.1
done
if command -v xdotool >/dev/null; then
    for _ in $(seq 300); do
        xdotool search --classname trayer >/dev/null 2>&1 && break
        sleep 0.1
    done
fi
# A tray exists once the tray host owns the _NET_SYSTEM_TRAY_S0 selection; a trayer that has its window
# but never takes the selection (seen once on a loaded machine) is started again.
py="$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python"
tray_owned() {
    "$py" -c 'from Xlib import display; d = display.Display(); raise SystemExit(0 if d.get_selection_owner(d.intern_atom("_NET_SYSTEM_TRAY_S0")) else 1)' 2>/dev/null
}
if [ -x "$py" ] && "$py" -c 'import Xlib' 2>/dev/null; then
    for attempt in 1 2; do
        for _ in $(seq 100); do
            tray_owned && break 2
            sleep 0.1
        done
        if [ "$attempt" = 1 ]; then
            echo "with-desktop: the tray host did not take the tray selection; starting it again" >&2
            kill "${started[1]}" 2>/dev/null || true
            trayer --edge top --align right --widthtype request --height 24 --SetDockType true \
                --transparent true --alpha 0 >>"$session/trayer.log" 2>&1 &
            started+=($!)
        fi
    done
fi

rc=0
"$@" || rc=$?
exit "$rc"
