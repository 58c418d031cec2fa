"""Conformance: the HPA's own Go test cases, transcribed and run through our decision core."""
