"""cuda2hip: a CUDA -> HIP source migration linter and rewriter."""

__version__ = "0.1.0"
