# shellcheck shell=bash
# Sourced by scripts/windows/check.sh (its helpers: wrun, wpy, winpath, figure, now, secs; $APP, $C, $HERE).
# Starts the frozen `desktop-memory.exe app` on its own Xvfb with Qt's windows platform plugin and drives it
# as a person and other Windows programs would:
#   1. a copy made by another Windows process with ExcludeClipboardContentFromMonitorProcessing is skipped;
#   2. a plain copy is stored, and the Windows CLI (`desktop-memory.exe search`) finds it through the app;
#   3. the search hotkey (Ctrl+Alt+M) pressed on the X display opens the search window, if Wine delivers
#      WM_HOTKEY (said either way; only counted as a failure when the app claims the hotkey works);
#   4. `desktop-memory.exe toggle` (a second start talking to the first) opens and closes it;
#   5. quitting (Ctrl+C to the console app, the same quit as the tray menu's) leaves no process behind.

# the frozen app's processes (the pattern does not match a shell command line that names it)
_dm_pids() { pgrep -f "[d]esktop-memory\.exe" || true; }
_dm_gone() { [ -z "$(_dm_pids)" ]; }

_dm_window_visible() {  # the search window is mapped on the X display
    xdotool search --onlyvisible --name "desktop-memory search" >/dev/null 2>&1
}

_dm_wait() {  # _dm_wait SECONDS COMMAND...: poll every 0.1 s
    local until=$(( $(date +%s) + $1 )); shift
    while [ "$(date +%s)" -lt "$until" ]; do "$@" && return 0; sleep 0.1; done
    return 1
}

_dm_found() {  # the Windows CLI finds $1 in the app's data folder
    wrun "$APP" search "$1" --limit 3 2>&1 | grep -q "$1"
}

drive_app_run() {
    local data=$C/appdata log=$C/app.log xpid apid rc=0 n token secret t
    wineserver -k 2>/dev/null; sleep 1
    rm -rf "$data" && mkdir -p "$data"
    for n in $(seq 90 99); do [ -e "/tmp/.X11-unix/X$n" ] || break; done
    Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 & xpid=$!
    export DISPLAY=":$n" DESKTOP_MEMORY_HOME; DESKTOP_MEMORY_HOME=$(winpath "$data")
    _dm_wait 10 xdotool getdisplaygeometry >/dev/null || { echo "   Xvfb did not start"; kill "$xpid"; return 1; }
    # the app's console output goes through a pipe (see wrun), read into $log
    rm -f "$log.pipe"; mkfifo "$log.pipe"; cat "$log.pipe" >"$log" & apid=$!
    QT_QPA_PLATFORM=windows wine "$APP" --debug app </dev/null >"$log.pipe" 2>&1 &
    t=$(now)
    if ! _dm_wait 120 grep -q "clipboard watcher started" "$log"; then
        echo "   the app did not start its clipboard watcher in 120 s:"; tail -15 "$log" | sed 's/^/     /'
        rc=1
    else
        figure app_ready_s "$(secs "$t")"
        token="plainwine$RANDOM$RANDOM" secret="secretwine$RANDOM$RANDOM"
        wpy "$(winpath "$HERE/clipboard_copy.py")" "password $secret" --exclude | sed 's/^/   helper: /'
        sleep 2
        wpy "$(winpath "$HERE/clipboard_copy.py")" "meeting notes $token for the Windows tier" | sed 's/^/   helper: /'
        if _dm_wait 60 _dm_found "$token"; then
            echo "   the plain copy was stored and the Windows CLI found it"
        else
            echo "   the plain copy was not found by the Windows CLI in 60 s"; rc=1
        fi
        if _dm_found "$secret"; then
            echo "   the copy marked ExcludeClipboardContentFromMonitorProcessing was STORED"; rc=1
        else
            echo "   the copy marked ExcludeClipboardContentFromMonitorProcessing was skipped"
        fi
        _dm_hotkey || rc=1
        _dm_toggle || rc=1
    fi
    _dm_quit "$log" || rc=1
    kill "$xpid" 2>/dev/null; wait "$xpid" 2>/dev/null
    kill "$apid" 2>/dev/null; rm -f "$log.pipe"
    unset DISPLAY DESKTOP_MEMORY_HOME
    return $rc
}

_dm_hotkey() {
    local t note
    note=$(grep -m1 -o "global hotkeys are not available[^\"]*" "$C/app.log")
    if [ -n "$note" ]; then
        echo "   hotkey: the app says: $note (not pressed)"
        return 0
    fi
    _dm_window_visible && wrun "$APP" toggle >/dev/null  # start from a hidden search window
    t=$(now)
    xdotool key --clearmodifiers ctrl+alt+m
    if _dm_wait 5 _dm_window_visible; then
        figure hotkey_to_window_s "$(secs "$t")"
        echo "   hotkey: Ctrl+Alt+M on the X display opened the search window"
        xdotool key --clearmodifiers ctrl+alt+m
        return 0
    fi
    echo "   hotkey: Ctrl+Alt+M on the X display did not open the search window in 5 s (Wine did not deliver WM_HOTKEY)"
    grep -m3 -i "hotkey" "$C/app.log" | sed 's/^/     log: /'
    return 0
}

_dm_toggle() {
    local t
    t=$(now)
    wrun "$APP" toggle >/dev/null || { echo "   toggle: the second start got no answer"; return 1; }
    if _dm_wait 10 _dm_window_visible; then
        figure toggle_to_window_s "$(secs "$t")"
        echo "   toggle: a second start opened the search window"
        wrun "$APP" toggle >/dev/null
        return 0
    fi
    echo "   toggle: the search window did not appear"
    return 1
}

_dm_quit() {
    local pids before t
    pids=$(_dm_pids)
    before=$(echo "$pids" | grep -c .)
    echo "   quitting: $before desktop-memory.exe processes (the app and its engine host)"
    t=$(now)
    # Wine turns SIGINT into the console's CTRL_C_EVENT; the app's handler quits as the tray menu's Quit does
    pgrep -f "[d]esktop-memory\.exe --debug app" | xargs -r kill -INT
    if _dm_wait 30 _dm_gone; then
        figure quit_s "$(secs "$t")"
    else
        echo "   still running 30 s after quitting:"
        _dm_pids | xargs -r ps -o pid=,cmd= -p | sed 's/^/     /'
        _dm_pids | xargs -r kill -9
        return 1
    fi
    tail -3 "$1" | sed 's/^/     log: /'
    if timeout 20 wineserver -w; then  # waits for this prefix's wineserver, which ends with its last process
        echo "   no process left behind (this prefix's wineserver exited too)"
    else
        echo "   the app's processes exited, but this prefix's wineserver still runs 20 s later"
        return 1
    fi
    return 0
}
