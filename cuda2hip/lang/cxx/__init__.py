"""C++ / CUDA: the preprocessor and what a file defines, includes and calls."""
