"""What a call leaves for Python's cyclic garbage collector: objects in reference cycles, which are freed only
when it runs (the daemon pauses it while a tick reads metrics)."""

from __future__ import annotations

import gc
from collections.abc import Callable


def cyclic_garbage(call: Callable[[], object], *, module: str) -> list[str]:
    """The types, from modules under `module`, of the objects `call` left unreachable in reference cycles."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        call()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return [type(o).__qualname__ for o in gc.garbage if type(o).__module__.partition(".")[0] == module]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
