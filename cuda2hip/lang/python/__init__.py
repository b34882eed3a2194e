"""The Python side: CUDA C++ embedded in Python strings, and Python that drives CUDA (build
scripts, device tooling, environment). Parsing uses libcst, imported only for Python files."""
