"""Python predicates and fix builders used by YAML rules. Importing this package registers them
all; add a module here and import it below."""

from . import cmake_build  # noqa: F401,E402
from . import launch  # noqa: F401,E402  (kernel launches, HIP_SYMBOL)
