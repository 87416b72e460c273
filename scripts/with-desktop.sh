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
    # xvfb-run stops its X server when the session ends; dbus-run-session stops its bus.
    exec timeout --kill-after=20 "${DESKTOP_TIMEOUT:-3000}" \
        xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- bash "$0" "$@"
fi

# -- inside the X server and the D-Bus session -------------------------------------------------
session=$(mktemp -d "${TMPDIR:-/tmp}/desktop-session.XXXXXX")
export XDG_DATA_HOME="$session/data" XDG_CACHE_HOME="$session/cache" XDG_CONFIG_HOME="$session/config"
export XDG_RUNTIME_DIR="$session/runtime"
mkdir -p "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
started=()

cleanup() {
    for pid in "${started[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${started[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$session"
}
trap cleanup EXIT

# A fresh keyring unlocked with a throw-away password (a reused one would open an invisible prompt).
printf '%s' "throwaway" | gnome-keyring-daemon --foreground --unlock --components=secrets \
    --control-directory="$XDG_RUNTIME_DIR/keyring" >"$session/keyring.log" 2>&1 &
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
