"""Closing an index while another thread is still opening it (a cancelled sync's thread at
shutdown) must wait for it: closing a connection sqlite is using crashes the process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

RACE = textwrap.dedent(
    """
    import sys, threading
    from pathlib import Path
    from clawbot_memory.driver import open_driver
    from clawbot_memory.store import Store

    root, driver = Path(sys.argv[1]), open_driver()
    for i in range(2000):
        store = Store(root / f"index{i % 5}.sqlite", driver)
        opening = threading.Thread(target=store.open)
        opening.start()
        store.close()
        opening.join()
        store.close()
    print("closed 2000 times")
    """
)


def test_closing_an_index_another_thread_is_opening_does_not_crash(tmp_path: Path) -> None:
    # in a child: the failure is a segfault, which must fail this test, not end the run
    done = subprocess.run([sys.executable, "-c", RACE, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "closed 2000 times"), done.stderr[-2000:]
