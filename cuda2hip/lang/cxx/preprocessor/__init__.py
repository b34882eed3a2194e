"""The preprocessor, as one model: `#if` conditions (conditions.py), what each build defines
(macros.py), conditional directives in a parsed file (directives.py) and in its text (layout.py)."""
