"""`autoscaler run` fixes glibc malloc's mmap threshold: once a large block has been freed, glibc would take later
large buffers (answers, watch events, request bodies) from the heap, which the small long-lived blocks made
between them keep from shrinking (at 10,000 targets 64 MiB of free heap; docs/performance.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# After an 8 MiB block is freed (glibc's own threshold then rises to 8 MiB), 20 buffers of 300 kB: how many are
# mmapped blocks of their own (given back to the system when freed) rather than carved from the heap.
PROGRAM = """
import ctypes, json, sys
from autoscaler.daemon.app import fix_mmap_threshold
fixed = fix_mmap_threshold() if sys.argv[1] == "fixed" else None
class Info(ctypes.Structure):
    names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost"
    _fields_ = [(n, ctypes.c_size_t) for n in names.split()]
mallinfo2 = ctypes.CDLL(None).mallinfo2
mallinfo2.restype = Info
big = b"x" * (8 * 2**20)
del big
before = mallinfo2().hblks
buffers = [b"y" * 300_000 + bytes([i]) for i in range(20)]
print(json.dumps({"fixed": fixed, "mmapped": mallinfo2().hblks - before}))
"""


def _run(mode: str, **env: str) -> dict[str, object]:
    environment = {k: v for k, v in os.environ.items() if k != "MALLOC_MMAP_THRESHOLD_"} | env
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True, check=True, env=environment
    )
    return dict(json.loads(out.stdout))


def test_large_buffers_stay_out_of_the_heap() -> None:
    assert _run("plain") == {"fixed": None, "mmapped": 0}  # glibc's own threshold: all 20 from the heap
    assert _run("fixed") == {"fixed": True, "mmapped": 20}


def test_a_threshold_the_user_set_is_left_alone() -> None:
    assert _run("fixed", MALLOC_MMAP_THRESHOLD_="65536") == {"fixed": False, "mmapped": 20}
