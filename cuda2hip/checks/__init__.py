"""The checks of the built-in rules: one module, or package, per rule family, named as the
folders of the top-level rules/ folder (api, barriers, build, diagnostics, hazards, launch,
preprocessor, python, streams, warp). A family's module defines the rule kinds, `check:`
predicates and fix `builder`s its YAML rules name, and registers them when imported: the engine
imports it the first time one of its rules is compiled (engine/families.py)."""
