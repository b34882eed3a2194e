"""blake2b without `import hashlib`: hashlib loads OpenSSL's libcrypto, ~3 ms of every start-up
(pre-commit pays it on each call); the built-in _blake2 module is enough for cache keys."""

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

__all__ = ["blake2b"]
