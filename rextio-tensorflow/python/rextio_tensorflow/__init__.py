"""Marker types for the rextio-tensorflow backend. Importing this package never imports tensorflow."""
