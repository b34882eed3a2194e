"""Frontends by language id. Entries are import paths so that a run loads only the frontends
its files need (keeps pre-commit start-up light)."""

from __future__ import annotations

import importlib
from functools import lru_cache

from .base import Frontend

# language id -> "module:Class"
FRONTENDS: dict[str, str] = {
    "cuda": "cuda2hip.engine.frontends.cuda:CudaFrontend",
    "python": "cuda2hip.engine.frontends.python:PythonFrontend",
    "cmake": "cuda2hip.engine.frontends.cmake:CMakeFrontend",
    "make": "cuda2hip.engine.frontends.make:MakeFrontend",
}


@lru_cache(maxsize=None)
def frontend(language: str) -> Frontend:
    try:
        target = FRONTENDS[language]
    except KeyError:
        raise KeyError(f"no frontend for language {language!r}") from None
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)()
