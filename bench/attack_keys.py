"""Issue #38 item 8's attacks, and issue #46's (items 1-2), rerun: where does a key show, and what
does it break?

- a key in `--lsrb-base-url` user info, on a run that ends with a "to finish it" line;
- a server echoing the key's first 20 characters (OpenAI's "Incorrect API key provided: ...");
- a key pasted where a variable's name belongs (`--lsrb-api-key-env sk-...`);
- a several-model `lsrb run`: the children's command lines (what `ps` shows every user);
- keys of 16 to 4,096 characters (OAuth and JWT bearer tokens are 600-2,000): building the
  redaction and masking a 1 MB body that holds the key and a 40-character start of it, in a child
  process on the checkout's own code (best of 5 each), each length's time as a ratio to the
  16-character key's measured in the same child; then a whole run with a 2,000-character key
  against a server that echoes it;
- a key that is also a word of the answer (`simp`, a right tactic): how many of 3 right answers
  pass, and whether the key reaches attempts.jsonl, JUnit XML or the terminal.

    python bench/attack_keys.py CHECKOUT [--only long_keys,word_key]

CHECKOUT is a project tree (this one, or an old commit's: `git archive COMMIT | tar -x -C DIR`, with
this tree's tests/fakes/ollama_server.py copied in for its `echo_key_prefix` fault).
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

KEY = "sk-proj-attack8-7f3a9c1e5b2d4f60a8e1QX"
PW = "pw-attack8-9d1c7b3e5a"


def run(root: Path, args: list[str], env: dict[str, str], out: Path) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(root / "suites/goal_to_tactic_proposal_v1"),
        "-q",
        "-p",
        "no:cacheprovider",
        f"--lsrb-output-dir={out}",
        *args,
    ]
    e = {**os.environ, "PYTHONPATH": str(root), **env}
    return subprocess.run(cmd, capture_output=True, text=True, env=e, cwd=out.parent)


def leaks(text: str, secret: str, n: int = 8) -> bool:
    return secret[:n] in text


def main(root: Path) -> None:
    sys.path.insert(0, str(root / "tests"))
    from fakes.ollama_server import FakeOllama

    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        with FakeOllama() as fake:
            fake.queue(["server_500"] * 2)
            url = fake.url.replace("http://", f"http://alice:{PW}@") + "/v1"
            r = run(
                root,
                [
                    "--lsrb-adapter=openai",
                    "--lsrb-model=qwen2.5:7b",
                    f"--lsrb-base-url={url}",
                    "--lsrb-max-items=2",
                    "--lsrb-max-retries=0",
                    "--lsrb-concurrency=1",
                ],
                {},
                tmp / "a",
            )
            printed = r.stdout + r.stderr
            files = b"".join(p.read_bytes() for p in (tmp / "a").rglob("*") if p.is_file())
            print(
                "userinfo key: in terminal:", leaks(printed, PW), " in run files:", PW[:8].encode() in files
            )
        with FakeOllama() as fake:
            fake.queue(["echo_key_prefix"] * 2)
            r = run(
                root,
                [
                    "--lsrb-adapter=openai",
                    "--lsrb-model=qwen2.5:7b",
                    f"--lsrb-base-url={fake.url}/v1",
                    "--lsrb-max-items=2",
                    "--lsrb-api-key-env=K",
                    "--lsrb-max-retries=0",
                    "--lsrb-concurrency=1",
                    "--lsrb-outcome=record",
                    f"--junitxml={tmp / 'j.xml'}",
                    "-rA",
                ],
                {"K": KEY},
                tmp / "b",
            )
            printed = r.stdout + r.stderr
            files = b"".join(p.read_bytes() for p in [*(tmp / "b").rglob("*"), tmp / "j.xml"] if p.is_file())
            print(
                "echoed 20-char prefix: in terminal:",
                leaks(printed, KEY, 12),
                " in attempts/junit:",
                KEY[:12].encode() in files,
            )
        with FakeOllama() as fake:
            r = run(
                root,
                [
                    "--lsrb-adapter=openai",
                    "--lsrb-model=qwen2.5:7b",
                    f"--lsrb-base-url={fake.url}/v1",
                    f"--lsrb-api-key-env={KEY}",
                ],
                {},
                tmp / "c",
            )
            print(
                "key pasted as variable name: quoted back:",
                leaks(r.stdout + r.stderr, KEY, 12),
                "rc",
                r.returncode,
            )
        # several models: does a child's command line (what `ps` shows every user) hold the key?
        import time

        with FakeOllama(latency_s=0.4) as fake:
            url = fake.url.replace("http://", f"http://alice:{PW}@") + "/v1"
            cmd = [
                sys.executable,
                "-m",
                "pytest_lsrb",
                "run",
                "goal_to_tactic_proposal_v1",
                "--lsrb-adapter=openai",
                "--lsrb-model=qwen2.5:7b",
                "--lsrb-model=smollm2:135m",
                "--lsrb-allow-model-alias",
                f"--lsrb-base-url={url}",
                "--lsrb-max-items=3",
                f"--lsrb-output-dir={tmp / 'g'}",
            ]
            parent = subprocess.Popen(
                cmd,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": str(root)},
                cwd=tmp,
            )
            seen = set()
            deadline = time.time() + 60
            while parent.poll() is None and time.time() < deadline:
                for proc in Path("/proc").iterdir():
                    if proc.name.isdigit() and int(proc.name) != parent.pid:
                        try:
                            line = (proc / "cmdline").read_bytes()
                        except OSError:
                            continue
                        if PW.encode() in line and b"pytest" in line:
                            seen.add(proc.name)
                time.sleep(0.05)
            parent.wait(timeout=120)
            logs = b"".join(p.read_bytes() for p in (tmp / "g").rglob("*.log"))
            print(
                "several models: child command lines holding the key:",
                len(seen),
                " in <label>.log:",
                PW[:8].encode() in logs,
            )


LENGTHS = (16, 256, 600, 1024, 2048, 4096)
_TIMING = """
import random, re, string, sys, time
from pytest_lsrb.core.redaction import Secrets
rng = random.Random(0)
body = ("lorem ipsum dolor sit amet " * 40000)[:1_000_000]
base = None
# one key, cut to each length: every length has the same first characters (what the search for a
# key's start looks for), so the times differ by the length alone
longest = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(4096))
for n in map(int, sys.argv[1:]):
    key = longest[:n]
    text = body[:400_000] + key + body[:300_000] + key[:40] + body[:300_000]
    def best(f):
        times = []
        for _ in range(5):
            t0 = time.perf_counter(); f(); times.append(time.perf_counter() - t0)
        return min(times)
    try:
        secrets = Secrets([key])
        build = best(lambda: (re.purge(), Secrets([key])))
        out = best(lambda: secrets.redact(text))
        clean = key[:8] not in secrets.redact(text)
    except RecursionError:
        print(f"  key of {n:5d} chars: RecursionError"); continue
    base = base or (build, out)
    print(f"  key of {n:5d} chars: build {build * 1e3:7.1f} ms ({build / base[0]:5.2f}x the 16-char key's), "
          f"mask 1 MB {out * 1e3:6.1f} ms ({out / base[1]:5.2f}x), key left: {not clean}")
"""


def long_keys(root: Path) -> None:
    """Redaction's cost against the key's length, on the checkout's code; then a whole run."""
    print("long keys: redaction on", root)
    env = {**os.environ, "PYTHONPATH": str(root)}
    timing = subprocess.run(
        [sys.executable, "-c", _TIMING, *map(str, LENGTHS)], capture_output=True, text=True, env=env
    )
    print(timing.stdout.rstrip() or timing.stderr[-2000:])
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fakes.ollama_server import FakeOllama

    key = "".join(chr(ord("a") + (i * 7) % 26) for i in range(2000))
    with tempfile.TemporaryDirectory() as scratch, FakeOllama(require_key=key) as fake:
        fake.queue(["echo_key_200", "echo_key_prefix"])
        r = run(
            root,
            [
                "--lsrb-adapter=openai",
                "--lsrb-model=qwen2.5:7b",
                f"--lsrb-base-url={fake.url}/v1",
                "--lsrb-max-items=3",
                "--lsrb-api-key-env=K",
                "--lsrb-max-retries=0",
                "--lsrb-outcome=record",
            ],
            {"K": key},
            Path(scratch) / "a",
        )
        printed = r.stdout + r.stderr
        files = b"".join(p.read_bytes() for p in (Path(scratch) / "a").rglob("*") if p.is_file())
        print(
            f"  a run with a 2,000-character key: rc {r.returncode}, INTERNALERROR: "
            f"{'INTERNALERROR' in printed}, {printed.count(chr(10))} lines printed, "
            f"key's start in terminal: {key[:8] in printed}, in run files: {key[:8].encode() in files}"
        )


def word_key(root: Path) -> None:
    """Key `simp`, every answer `simp` (a right tactic): judged on what the server sent?"""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from fakes.ollama_server import FakeOllama

    with tempfile.TemporaryDirectory() as scratch, FakeOllama(require_key="simp", reply="simp") as fake:
        tmp = Path(scratch)
        r = run(
            root,
            [
                "--lsrb-adapter=openai",
                "--lsrb-model=qwen2.5:7b",
                f"--lsrb-base-url={fake.url}/v1",
                "--lsrb-max-items=3",
                "--lsrb-api-key-env=K",
                f"--junitxml={tmp / 'j.xml'}",
                "-rA",
            ],
            {"K": "simp"},
            tmp / "a",
        )
        printed = r.stdout + r.stderr
        verdict = next((line for line in reversed(printed.splitlines()) if " in " in line), "")
        print(
            f"key `simp`, 3 answers `simp`: rc {r.returncode}, {verdict.strip('= ')}; warned: "
            f"{'WARNING' in printed and 'is 4 characters long' in printed}; `simp` in attempts.jsonl: "
            f"{'simp' in (tmp / 'a' / 'attempts.jsonl').read_text()}, in JUnit: "
            f"{'simp' in (tmp / 'j.xml').read_text()}, in terminal: {'simp' in printed}"
        )


if __name__ == "__main__":
    checkout = Path(sys.argv[1])
    only = sys.argv[3].split(",") if len(sys.argv) > 3 and sys.argv[2] == "--only" else None
    if only is None or "echoes" in only:
        main(checkout)
    if only is None or "long_keys" in only:
        long_keys(checkout)
    if only is None or "word_key" in only:
        word_key(checkout)
