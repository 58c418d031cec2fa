"""A simulated cluster for the demo, replay and tests: the Kubernetes API emulator and its models."""
