"""A simulated cluster for the tests: the Kubernetes API emulator (a demo and a simulator will use it too)."""
