"""The emulator's list of every pod: a paged list (500 per page, as the kube layer's informers page) and one
unpaged list, timed from a client over HTTP (keep-alive, each page's JSON parsed, nothing else kept).

    .venv/bin/python bench/emulator_list.py --pods 10000 50000
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import fixtures


def paged_list(port: int, limit: int) -> tuple[int, int, float]:
    """(items, pages, seconds) of a list of every pod in pages of `limit` (0: one unpaged list)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    items = pages = 0
    token = ""
    started = time.perf_counter()
    while True:
        query: dict[str, Any] = {"limit": limit} if limit else {}
        if token:
            query["continue"] = token
        connection.request("GET", "/api/v1/pods?" + urllib.parse.urlencode(query))
        response = connection.getresponse()
        body = json.loads(response.read())
        if response.status != 200:
            raise SystemExit(f"list failed: {response.status} {body}")
        items += len(body["items"])
        pages += 1
        token = body["metadata"].get("continue") or ""
        if not token:
            break
    connection.close()
    return items, pages, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--page", type=int, default=500)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    rows = []
    for pods in args.pods:
        layout = fixtures.Layout(targets=pods // fixtures.PODS_PER_TARGET)
        started = time.perf_counter()
        with fixtures.emulator(layout) as server:
            setup = time.perf_counter() - started
            items, pages, paged = paged_list(server.port, args.page)
            if items != pods:
                raise SystemExit(f"the paged list gave {items} pods, not {pods}")
            _, _, unpaged = paged_list(server.port, 0)
        rows.append({"pods": pods, "setup_seconds": round(setup, 1), "pages": pages,
                     "paged_seconds": round(paged, 2), "unpaged_seconds": round(unpaged, 2)})  # fmt: skip
    print(f"| pods | set-up (s) | pages of {args.page} | paged list (s) | unpaged list (s) |")
    print("|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['pods']:,} | {row['setup_seconds']} | {row['pages']} | {row['paged_seconds']} | "
              f"{row['unpaged_seconds']} |")  # fmt: skip
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
