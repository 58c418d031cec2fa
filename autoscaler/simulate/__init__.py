"""The scaling-quality simulator: a spec's decisions over a load trace, through the real core (docs/performance.md)."""
