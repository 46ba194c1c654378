"""Marker types for the rextio-torch backend. Importing this package never imports torch."""
