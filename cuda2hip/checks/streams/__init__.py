"""Streams and copies (rules/streams, HIP3xx): default-stream semantics, blocking copies."""

from . import memcpy_async, streams  # noqa: F401
