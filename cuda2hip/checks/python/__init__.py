"""Rule kinds for Python files. Importing this package registers them (frontends/registry.py
lists it in RULE_KIND_MODULES); none of them imports libcst until a Python file is linted."""

from . import commands, embedded, env, nvcc_flags, qualified_names  # noqa: F401
