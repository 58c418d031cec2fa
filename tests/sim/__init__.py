"""Tests of the simulated cluster: the Kubernetes API emulator."""
