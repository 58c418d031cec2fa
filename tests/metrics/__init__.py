"""Tests of the metric-source layer, against a real Prometheus where it matters."""
