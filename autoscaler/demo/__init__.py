"""`make demo`: the autoscaler at work on one machine, everything on 127.0.0.1, for two minutes.

`python -m autoscaler.demo` starts the emulator seeded with config/demo/'s web service and queue worker, the
load model replaying a real trace excerpt (config/demo/trace-excerpt.csv) as CPU load for the web service
and as queue backlog for the worker, a real Prometheus scraping it, and `autoscaler run --config
config/demo/daemon.yaml`; prints one table line per sync period; stops everything it started on Ctrl-C or
after `--duration`; writes a chart and the decision log. It drives the daemon as a user would: through its
command, its HTTP endpoints and its log, so it imports only the emulator and the load model (autoscaler.sim).
"""

from autoscaler.demo.run import main

__all__ = ["main"]
