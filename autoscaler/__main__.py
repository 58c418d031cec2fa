"""`python -m autoscaler` is the `autoscaler` command."""

from autoscaler.cli import main

raise SystemExit(main())
