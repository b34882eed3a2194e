"""Python predicates and fix builders used by YAML rules. Importing this package registers them
all; add a module here and import it below."""

from . import barriers, cmake_build, hazards, launch, memcpy_async, streams, warp  # noqa: F401,E402
