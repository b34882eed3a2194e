"""Streams and copies (rules/streams, HIP3xx): default-stream semantics, blocking copies."""
