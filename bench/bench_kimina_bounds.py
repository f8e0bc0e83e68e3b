"""How much a hostile Kimina server can take from one check (issue #27 item 2), as ratios.

    python bench/bench_kimina_bounds.py

Against tests/fakes/hostile_kimina.py on 127.0.0.1, one `KiminaBackend.check` each:
- `huge`: a 300 MB reply. Prints the peak RSS growth of this process during the check, and its
  ratio to the body cap (adapters.http.MAX_BODY_BYTES) and to the reply's size.
- `drip`: a reply of 10,000 bytes sent one every 0.2 s (2,000 s if read whole). Prints the check's
  wall time as a ratio of `check_timeout_s`, and the ratio to the time a well-behaved answer
  (`ok`) takes, measured in the same run.
"""

from __future__ import annotations

import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from fakes.hostile_kimina import HostileKimina

from pytest_lsrb.adapters.http import MAX_BODY_BYTES
from pytest_lsrb.tactic.lean.kimina import KiminaBackend

SOURCE = "theorem t : True := by\n  trivial\n\n#print axioms t\n"
TIMEOUT_S = 2.0


def rss_mb() -> float:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


def peak_during(action: object) -> tuple[float, float]:
    """(peak RSS growth in MB while `action()` runs, seconds it took)."""
    base = rss_mb()
    peak = base
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, rss_mb())
            time.sleep(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    start = time.perf_counter()
    action()  # type: ignore[operator]
    took = time.perf_counter() - start
    done.set()
    sampler.join()
    return max(peak, rss_mb()) - base, took


def one(mode: str) -> tuple[float, float, str]:
    server = HostileKimina(mode)
    backend = KiminaBackend(server.url, TIMEOUT_S)
    status = ""

    def check() -> None:
        nonlocal status
        status = backend.check(SOURCE, rel_path="A.lean").status

    try:
        grown, took = peak_during(check)
    finally:
        backend.close()
        server.close()
    return grown, took, status


def main() -> None:
    one("ok")  # warm up imports and the first connection
    _, ok_s, ok_status = one("ok")
    huge_mb, _, huge_status = one("huge")
    _, drip_s, drip_status = one("drip")
    reply_mb = 300
    cap_mb = MAX_BODY_BYTES / 2**20
    print(f"ok:   {ok_status}, {ok_s * 1000:.1f} ms")
    print(
        f"huge: {huge_status}; peak RSS growth {huge_mb:.1f} MB = {huge_mb / cap_mb:.2f}x the "
        f"{cap_mb:.0f} MB body cap, {huge_mb / reply_mb:.3f}x the {reply_mb} MB reply"
    )
    print(
        f"drip: {drip_status}; {drip_s:.2f} s = {drip_s / TIMEOUT_S:.2f}x check_timeout_s ({TIMEOUT_S:g} s), "
        f"{drip_s / ok_s:.0f}x a well-behaved answer (reading it whole: 2000 s)"
    )


if __name__ == "__main__":
    main()
