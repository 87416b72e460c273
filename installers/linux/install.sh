#!/bin/sh
# Install desktop-memory for this user (no root): ~/.local/lib/desktop-memory, a command in
# ~/.local/bin, a menu entry and an icon. `sh install.sh --autostart` also starts it at login;
# `sh install.sh --uninstall` removes the program and keeps your memories (add --purge-data to erase them).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix="${XDG_DATA_HOME:-$HOME/.local/share}"
lib="$HOME/.local/lib/desktop-memory"
bin="$HOME/.local/bin/desktop-memory"
entry="$prefix/applications/desktop-memory.desktop"
icon="$prefix/icons/hicolor/scalable/apps/desktop-memory.svg"
autostart="${XDG_CONFIG_HOME:-$HOME/.config}/autostart/desktop-memory.desktop"

if [ "${1:-}" = "--uninstall" ]; then
    # the browsers' native messaging host manifests setup-browser wrote (the extension itself is the browser's)
    [ -x "$bin" ] && "$bin" setup-browser --remove --browser all >/dev/null 2>&1 || true
    rm -rf "$lib" "$bin" "$entry" "$icon" "$autostart"
    if [ "${2:-}" = "--purge-data" ]; then
        rm -rf "${XDG_DATA_HOME:-$HOME/.local/share}/desktop-memory" "${XDG_CACHE_HOME:-$HOME/.cache}/desktop-memory"
        echo "desktop-memory and your memories were removed (remove its keyring entries in your passwords app)"
    else
        echo "desktop-memory was removed; your memories are kept in ${XDG_DATA_HOME:-$HOME/.local/share}/desktop-memory"
    fi
    exit 0
fi

mkdir -p "$(dirname "$lib")" "$(dirname "$bin")" "$(dirname "$entry")" "$(dirname "$icon")"
rm -rf "$lib"
cp -R "$here" "$lib"
ln -sf "$lib/desktop-memory" "$bin"
sed "s|@BIN@|$bin|" "$here/desktop-memory.desktop" > "$entry"
cp "$here/_internal/desktop_memory/resources/icons/ready.svg" "$icon"
if [ "${1:-}" = "--autostart" ]; then
    mkdir -p "$(dirname "$autostart")"
    cp "$entry" "$autostart"
fi
echo "installed: run desktop-memory (or pick it from your menu); check it with: $bin --smoke-test"
# the browser companion's way in: the native messaging host registered for the browsers found here
if "$bin" setup-browser >/dev/null 2>&1; then
    echo "browser companion: the native host is registered; add the extension (see the README), check with: $bin setup-browser --check"
else
    echo "note: the browser companion's host could not be registered; run: $bin setup-browser"
fi
# Chinese, Japanese and Korean memories need a font with those characters, or they show as boxes.
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh family 2>/dev/null | head -n 1)" ]; then
    if command -v apt-get >/dev/null 2>&1; then
        how="sudo apt-get install fonts-wqy-microhei"
    elif command -v dnf >/dev/null 2>&1; then
        how="sudo dnf install google-noto-sans-cjk-fonts"
    else
        how="install a CJK font (Noto Sans CJK or WenQuanYi Micro Hei) with your package manager"
    fi
    echo "note: no font for Chinese, Japanese or Korean text is installed, so such memories show as boxes; to fix it: $how"
fi
