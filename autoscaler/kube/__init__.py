"""The Kubernetes adapter: scale subresources, pods, caches, events, status, leases (docs/kube.md).

It turns API objects into the core's values and the client's exceptions into `autoscaler.kube.errors`; it
decides nothing. Nothing above this package imports `kubernetes` or urllib3.
"""
