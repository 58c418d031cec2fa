"""The daemon: `autoscaler run` and `autoscaler plan` wire the layers into the tick loop (ARCHITECTURE.md).

model.py: the values passed between its parts (a target to reconcile, what reconciling it gave). Every
other layer is below this one: nothing in core, spec, metrics, kube or sim imports the daemon.
"""
