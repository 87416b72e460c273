#!/usr/bin/env bash
# llama.cpp (llama-cpp-python), built for every CPU and not for this one (issue 28):
#   bash scripts/llama_build.sh PYTHON     # builds (or reuses) the wheel and installs it into PYTHON's environment
# scripts/dev.sh sources it; the installer workflow runs it on each OS's runner.
#
# llama.cpp's default GGML_NATIVE=ON compiles for the build machine (AVX-512, AMX: SIGILL elsewhere, and even on a
# CPU that reports AMX the thread may not be allowed to use it), and pip's wheel cache hands such a build back to
# later installs whatever CMAKE_ARGS say. So the wheel is built with --no-cache-dir into a folder of our own named
# by the hash of the version, the flags and the compiler, and installed from there:
# - x86-64: the Haswell level (SSE4.2, AVX, AVX2, FMA, F16C, BMI2), no AVX-512, no AMX;
# - beside it on Linux x86-64, llama_cpp/lib/sse42/: the same llama.cpp for CPUs without AVX (SSE4.2 at most).
#   The model worker (engine/model_process.py) runs the first of the two that really works on the CPU at hand;
# - other architectures (arm64): llama.cpp's portable baseline (GGML_NATIVE=OFF).
# No mtmd (LLAVA_BUILD=OFF): the app never uses it.
set -euo pipefail
LLAMA_VERSION=${LLAMA_VERSION:-0.3.36}
BUILD_CACHE=${DESKTOP_MEMORY_BUILD_CACHE:-$HOME/.cache/desktop-memory-build}
LLAMA_X86="-DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
LLAMA_SSE42="-DGGML_SSE42=ON -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF -DGGML_BMI2=OFF"
LLAMA_OFF="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF
    -DGGML_AVX_VNNI=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_CPU_ALL_VARIANTS=OFF"

llama_build() {
    local py=$1 arch os flags key dir sp whl sse=0
    arch=$(uname -m)
    os=$(uname -s)
    flags="$LLAMA_OFF -DLLAVA_BUILD=OFF"
    case "$arch" in x86_64|AMD64|amd64) flags="$flags $LLAMA_X86"; [ "$os" = Linux ] && sse=1 ;; esac
    flags=$(echo $flags)  # one line
    key=$(printf '%s\n' "$LLAMA_VERSION" "$flags" "$sse $LLAMA_SSE42" "$(c++ --version 2>&1 | head -n 1)" "$arch" "$os" \
        | sha256sum 2>/dev/null || printf '%s\n' "$LLAMA_VERSION" "$flags" "$sse" "$arch" "$os" | shasum -a 256)
    key=$(echo "$key" | cut -c1-16)
    dir=$BUILD_CACHE/llama-$LLAMA_VERSION-$key
    sp=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
    if [ "$(cat "$sp/llama_cpp/.desktop-memory-build" 2>/dev/null)" = "$key" ]; then
        return 0
    fi
    if ! compgen -G "$dir/llama_cpp_python-*.whl" >/dev/null; then
        echo "compiling llama.cpp $LLAMA_VERSION for any $arch CPU (10-30 minutes on 2 cores)" >&2
        rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
        "$py" -m pip download --quiet --no-cache-dir --no-deps --no-binary :all: -d "$dir.tmp" \
            "llama-cpp-python==$LLAMA_VERSION"
        CMAKE_ARGS="$flags" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$py" -m pip wheel --quiet \
            --no-cache-dir --no-deps -w "$dir.tmp" "$dir.tmp/llama_cpp_python-$LLAMA_VERSION.tar.gz"
        if [ "$sse" = 1 ]; then
            tar xzf "$dir.tmp/llama_cpp_python-$LLAMA_VERSION.tar.gz" -C "$dir.tmp"
            # shellcheck disable=SC2086
            cmake -S "$dir.tmp/llama_cpp_python-$LLAMA_VERSION/vendor/llama.cpp" -B "$dir.tmp/sse42" \
                -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON $LLAMA_OFF $LLAMA_SSE42 -DLLAMA_CURL=OFF \
                -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF \
                -DLLAMA_BUILD_COMMON=OFF '-DCMAKE_INSTALL_RPATH=$ORIGIN' -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON \
                >"$dir.tmp/sse42.log" 2>&1 || { tail -20 "$dir.tmp/sse42.log" >&2; return 1; }
            cmake --build "$dir.tmp/sse42" -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" --target llama \
                >>"$dir.tmp/sse42.log" 2>&1 || { tail -30 "$dir.tmp/sse42.log" >&2; return 1; }
            mkdir -p "$dir.tmp/lib-sse42"
            cp -P "$dir.tmp"/sse42/bin/*.so* "$dir.tmp/lib-sse42/"
        fi
        rm -rf "$dir.tmp/sse42" "$dir.tmp/llama_cpp_python-$LLAMA_VERSION" "$dir.tmp"/*.tar.gz
        rm -rf "$dir" && mv "$dir.tmp" "$dir"
    fi
    whl=$(compgen -G "$dir/llama_cpp_python-*.whl" | head -n 1)
    "$py" -m pip uninstall --quiet -y llama-cpp-python >/dev/null 2>&1 || true
    rm -rf "$sp/llama_cpp"  # with whatever an earlier build left there
    "$py" -m pip install --quiet --no-cache-dir "$whl"
    if [ -d "$dir/lib-sse42" ]; then
        mkdir -p "$sp/llama_cpp/lib/sse42" && cp -P "$dir"/lib-sse42/* "$sp/llama_cpp/lib/sse42/"
    fi
    echo "$key" > "$sp/llama_cpp/.desktop-memory-build"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    llama_build "${1:?usage: $0 PYTHON}"
fi
