"""Entry point of `python -m autoscaler.sim.apiserver` (see `command`)."""

import sys

from autoscaler.sim.apiserver.command import main

sys.exit(main())
