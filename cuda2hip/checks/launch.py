"""Fix builders for kernel launches (`<<<...>>>` -> hipLaunchKernelGGL) and device-symbol calls
(`hipMemcpyToSymbol(sym, ...)` -> `hipMemcpyToSymbol(HIP_SYMBOL(sym), ...)`)."""

from __future__ import annotations

import tree_sitter as ts

from ..engine.builders import BuiltFix, Match, fix_builder
from ..findings import Edit
from ..lang import parse as parsing
from ..lang.lazy_regex import LazyRegex

# hipLaunchKernelGGL is a `do { ... } while (0)` macro in HIP (amd_hip_runtime.h): it is a
# statement, so only launches that are whole statements are converted. Inside a macro body (a
# re-parsed fragment) a launch without its `;` sits in an ERROR node or at the top level.
_STATEMENT_PARENTS = frozenset({"expression_statement"})
_FRAGMENT_PARENTS = frozenset({"expression_statement", "ERROR", "translation_unit", "parameter_pack_expansion"})
_DIM3_DECLS = """
(declaration type: (type_identifier) @t declarator: (identifier) @n)
(declaration type: (type_identifier) @t declarator: (init_declarator declarator: (identifier) @n))
(parameter_declaration type: (type_identifier) @t declarator: (identifier) @n)
(parameter_declaration type: (type_identifier) @t declarator: (reference_declarator (identifier) @n))
"""
_DIM3_TEXT = LazyRegex(r"^\s*dim3\s*[({]")


def _dim3_names(ctx) -> frozenset[str]:
    """Variables and parameters the file declares with type dim3."""
    root = ctx.file_context
    got = root.cache.get("_dim3_names")
    if got is None:
        q = ts.Query(parsing.language("cuda"), _DIM3_DECLS)
        names = set()
        for _, caps in ts.QueryCursor(q).matches(root.tree.root_node):
            t = caps.get("t", [None])[0]
            if t is not None and root.node_text(t) == "dim3":
                names.update(root.node_text(n) for n in caps.get("n", []))
        got = root.cache["_dim3_names"] = frozenset(names)
    return got


def _as_dim3(text: str, ctx) -> str:
    if _DIM3_TEXT.match(text) or text.strip() in _dim3_names(ctx):
        return text  # already a dim3: no dim3(dim3(...))
    return f"dim3({text})"


def _code_children(node) -> list:
    return [c for c in node.named_children if c.type != "comment"]


@fix_builder("kernel_launch_to_ggl")
def kernel_launch_to_ggl(match: Match, ctx, rule) -> BuiltFix | None | bool:
    if ctx.settings.kernel_launch != "hip":
        return False  # `<<<...>>>` is kept (the default): not a finding
    node = match.node
    config = next((c for c in node.children if c.type == "kernel_call_syntax"), None)
    callee = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if config is None or callee is None or args is None:
        return None
    parent = node.parent
    allowed = _FRAGMENT_PARENTS if ctx.is_fragment else _STATEMENT_PARENTS
    if parent is None or parent.type not in allowed:
        return BuiltFix([], applicability="display-only",
                        message="kernel launch inside an expression: hipLaunchKernelGGL is a statement "
                                "macro, convert this launch by hand")
    conf = [ctx.node_text(c) for c in _code_children(config)]
    if not 2 <= len(conf) <= 4:
        return None
    name = ctx.node_text(callee)
    if "<" in name:
        # A template argument list may hold commas, which would split the macro's arguments.
        name = f"HIP_KERNEL_NAME({name})"
    grid, block = _as_dim3(conf[0], ctx), _as_dim3(conf[1], ctx)
    shm = conf[2] if len(conf) > 2 else "0"
    stream = conf[3] if len(conf) > 3 else "0"
    inner = ctx.data[args.start_byte + 1:args.end_byte - 1].decode("utf-8", "replace")
    parts = [name, grid, block, shm, stream]
    if inner.strip():
        parts.append(inner.strip())
    text = "hipLaunchKernelGGL(" + ", ".join(parts) + ")"
    return BuiltFix([Edit(node.start_byte, node.end_byte, text)],
                    description="Convert to hipLaunchKernelGGL")


# Which argument is the device symbol.
_SYMBOL_ARG = {"MemcpyToSymbol": 0, "MemcpyToSymbolAsync": 0, "MemcpyFromSymbol": 1,
               "MemcpyFromSymbolAsync": 1, "GetSymbolAddress": 1, "GetSymbolSize": 1}
_WRAPPABLE = frozenset({"identifier", "qualified_identifier", "field_expression", "subscript_expression",
                        "template_function"})


@fix_builder("hip_symbol_wrap")
def hip_symbol_wrap(match: Match, ctx, rule) -> BuiltFix | None | bool:
    node = match.node
    fn = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    if fn is None or args is None:
        return False
    name = ctx.node_text(fn)
    index = _SYMBOL_ARG.get(name[4:] if name.startswith("cuda") else name[3:])
    if index is None:
        return False
    actual = _code_children(args)
    if len(actual) <= index:
        return False
    sym = actual[index]
    text = ctx.node_text(sym)
    if sym.type == "call_expression" and text.replace(" ", "").startswith("HIP_SYMBOL("):
        return False  # already wrapped
    if sym.type not in _WRAPPABLE:
        return BuiltFix([], applicability="display-only",
                        message=f"`{name}`: pass the symbol itself as `HIP_SYMBOL(symbol)`; `{text}` is not "
                                "a plain symbol name, so it is not wrapped automatically")
    return BuiltFix([Edit(sym.start_byte, sym.end_byte, f"HIP_SYMBOL({text})")],
                    message=f"`{name}` takes a device symbol: pass `{text}` as `HIP_SYMBOL({text})`",
                    description=f"Wrap `{text}` in HIP_SYMBOL")
