"""Our seams around xdist and pytest: the one switch for everything that leans on their private names.

The fast paths use names neither project promises: xdist's `WorkerController.process_from_remote`
and `WorkerInteractor.sendevent` (batched messages, `session.transport`), a `LoadScheduling`
subclass calling `_send_tests` (`engine.schedule`), the scheduler's `node2pending` (blaming the
test a crashed worker ran, `session.transport.blame_running`), pytest's `terminal._tw`
(progress lines, `session.progress`) and `_pytest.config.console_main` / `_console_main` (heap
freezing, `session.heap`). `--lsrb-fastpath off` turns every one of them off: the run then uses
public hooks only, with the same records, only slower.
"""

from __future__ import annotations

from typing import Any

FASTPATH_OPTION = "lsrb_fastpath"


def fastpath(config: Any) -> bool:
    """True unless the run asked for public hooks only (`--lsrb-fastpath off`)."""
    getoption = getattr(config, "getoption", None)
    if not callable(getoption):
        return True
    return getoption(FASTPATH_OPTION, "on") != "off"
