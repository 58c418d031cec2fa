"""The pure decision core: the HPA's pod grouping, replica calculator and behavior engine.

It imports only the standard library, never reads the clock, never logs and never touches the network:
time, state and readings come in as values, and a decision with its explanation goes out as a value.
"""
