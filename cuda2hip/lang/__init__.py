"""Languages: source text and its parsing; C++/CUDA, Python and build files."""
