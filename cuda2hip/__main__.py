import os
import sys

# `python -m cuda2hip` puts the working directory first on sys.path: that is the tree being
# checked, and nothing is ever imported from it (a `yaml.py` there would otherwise be run).
if sys.path and sys.path[0] in ("", ".", os.getcwd()):
    del sys.path[0]

from .launch import entry  # noqa: E402

entry()
