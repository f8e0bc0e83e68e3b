"""Issue #38 item 8's attacks, rerun: where does a key show?

- a key in `--lsrb-base-url` user info, on a run that ends with a "to finish it" line;
- a server echoing the key's first 20 characters (OpenAI's "Incorrect API key provided: ...");
- a key pasted where a variable's name belongs (`--lsrb-api-key-env sk-...`);
- a several-model `lsrb run`: the children's command lines (what `ps` shows every user).

    python bench/attack_keys.py CHECKOUT

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


if __name__ == "__main__":
    main(Path(sys.argv[1]))
