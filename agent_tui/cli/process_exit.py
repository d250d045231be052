"""The way out of an ``agent-tui`` process: what a normal exit does, without freeing the heap.

A normal interpreter exit runs the atexit hooks, flushes stdout and stderr, waits for
the threads that are not daemons, and then frees every module and object. The last
step does nothing anyone can see, and with the SDK loaded (some 3,000 modules) it costs
about half a second of CPU: after every ``agent-tui -p`` a script waits for it. So
:func:`leave` does the first three steps and then ends the process.

A thread that still runs and is not a daemon is waited for as a normal exit would:
then the exit is a normal one, heap and all.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

# what Python exits with when it cannot flush stdout at exit (a closed pipe)
FLUSH_FAILED = 120


def leave(code: int) -> NoReturn:
    """End this process with ``code`` once the atexit hooks ran and output is flushed."""
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except (OSError, ValueError):
            code = code or FLUSH_FAILED
    os._exit(code)
