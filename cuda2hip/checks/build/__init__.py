"""Build-system migration (CMake, Makefiles): syntax helpers over the tree-sitter trees, the
token tables (nvcc flags, CUDA libraries) and the rule kinds the YAML rules in rules/build use."""
