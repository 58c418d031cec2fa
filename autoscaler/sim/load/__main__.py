"""Entry point of `python -m autoscaler.sim.load` (see `command`)."""

import sys

from autoscaler.sim.load.command import main

sys.exit(main())
