"""Reading autoscaler specs and decision snapshots into the core's value types, strictly.

Every error names the field path ("spec.metrics[1].external.target.averageValue") and the bad value.
"""
