"""rextio-tensorflow certification project (see kernels.py)."""
