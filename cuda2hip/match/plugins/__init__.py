"""Python predicates and fix builders used by YAML rules. Importing this package registers them
all; add a module here and import it below."""

from . import barriers, hazards, launch, memcpy_async, streams, warp  # noqa: F401,E402

# Plugins of other languages' rules, imported only when a name is not found among the above
# (a run over C++/CUDA files does not pay for the build-file parser).
OTHER_LANGUAGES = ["cmake_build"]
