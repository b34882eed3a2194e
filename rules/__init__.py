"""Built-in YAML rules of cuda2hip (shipped as the package cuda2hip.builtin_rules)."""
