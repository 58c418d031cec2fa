"""A Prometheus-driven Kubernetes autoscaler that makes exactly the HPA's decisions, and explains them."""

__version__ = "0.1.0"
