"""`python -m autoscaler.demo` is the demo driver (`make demo`)."""

from autoscaler.demo.run import main

raise SystemExit(main())
