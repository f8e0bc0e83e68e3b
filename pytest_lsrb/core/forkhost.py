"""The fork host: the process `core.bounded` forks its bounded children from.

Started once per calling process as `python -m pytest_lsrb.core.forkhost FD MODULE...`: it
imports the MODULEs, then waits on the control socket FD. Each message there carries one
connected socket; the host forks a child for it and goes back to waiting. The child runs one
call on that socket (`serve_call`): it says its pid, reads where to look for modules and its
memory budget, loads the call, limits its address space, runs it and sends back the outcome.

Why not multiprocessing's forkserver: each of its children re-runs the caller's `__main__`
script (as `__mp_main__`) to unpickle the call, so a user's script that calls `pytest.main()`
without an `if __name__ == "__main__":` guard started a second, nested pytest session in every
child. This host starts from our own module, and its children never look at the caller's
`__main__`.
"""

from __future__ import annotations

import importlib
import math
import os
import pickle
import resource
import signal
import socket
import sys
import traceback
from multiprocessing.connection import Connection
from typing import Any


def _vm_bytes() -> int:
    """This process's current address-space size (VmSize), 0 when unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _outcome(conn: Connection) -> tuple[str, Any]:
    sys_path, cwd, memory_mb, time_s = pickle.loads(conn.recv_bytes())
    # A backstop for a child whose caller is gone (killed before it could stop this one): the
    # kernel ends it once it has used its budget's worth of CPU time.
    if math.isfinite(time_s):
        cpu_s = int(time_s) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    sys.path[:] = sys_path
    os.chdir(cwd)
    try:
        # loaded before the limit: importing what the call needs is not the call's own memory
        fn, args, kwargs = pickle.loads(conn.recv_bytes())
    except Exception as exc:
        return ("error", f"the call could not be loaded in the worker ({type(exc).__name__}: {exc})")
    if memory_mb:
        limit = _vm_bytes() + memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        return ("ok", fn(*args, **kwargs))
    except MemoryError:
        return ("memory", f"needed more than {memory_mb} MB")
    except RecursionError:
        return ("memory", "recursion too deep")
    except Exception as exc:  # the caller classifies; a traceback helps whoever reads it
        return ("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}")


def serve_call(fd: int) -> None:
    """A forked child: run the one call that arrives on socket `fd` and send its outcome."""
    conn = Connection(fd)
    try:
        conn.send(os.getpid())
        message = _outcome(conn)
        try:
            conn.send(message)
        except MemoryError:
            conn.send(("memory", "the result was too large to send back"))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            conn.send(("error", f"the result could not be sent back ({type(exc).__name__}: {exc})"))
    except (EOFError, OSError):
        pass  # the caller gave up on this call (its budget ran out) and closed its end
    finally:
        conn.close()


def serve(control: socket.socket) -> None:
    """Fork one child per socket received on `control`, until the caller closes it."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 1, 1)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return  # the caller is gone
        for fd in fds:
            pid = os.fork()
            if pid == 0:
                status = 0
                try:
                    control.close()
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    signal.signal(signal.SIGINT, signal.SIG_DFL)
                    serve_call(fd)
                except BaseException:
                    status = 1
                finally:
                    os._exit(status)
            os.close(fd)


def main(argv: list[str]) -> None:
    control = socket.socket(fileno=int(argv[0]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the caller, who closes us
    for module in argv[1:]:
        try:
            importlib.import_module(module)
        except Exception:
            traceback.print_exc()  # the call that needs it will report its own error
    serve(control)


if __name__ == "__main__":
    main(sys.argv[1:])
