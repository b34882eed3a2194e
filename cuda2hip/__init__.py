"""cuda2hip: a CUDA -> HIP source migration linter and rewriter."""

__version__ = "0.2.0"
