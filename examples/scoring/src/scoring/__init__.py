"""Scoring kernels compiled by Rextio (see kernels.py)."""
