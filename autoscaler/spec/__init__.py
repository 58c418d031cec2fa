"""Reading autoscaler specs and decision snapshots into the core's value types, strictly.

Every error names the field path ("spec.metrics[1].external.target.averageValue") and the bad value, and
every problem is reported at once. hpa.py and fields.py: the autoscaling/v2 spec and its field types;
validation.py: the API server's rules across fields (docs/spec.md); prometheus.py: the per-metric
Prometheus binding; settings.py: controller settings and feature gates; objects.py and files.py: custom
resources, HPA manifests and spec files; snapshot.py and readings.py: decision snapshots; render.py:
decisions as JSON. This layer talks to no server and imports neither kube nor metrics.
"""
