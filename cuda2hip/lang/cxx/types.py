"""C++ types as compilers' name mangling spells them: a parameter's type with every typedef of the
C/C++ headers resolved, qualifiers east of what they qualify, each type name mapped by a caller's
function (api/type_identity.py maps CUDA and HIP names to the types they denote)."""

from __future__ import annotations

from ..lazy_regex import LazyRegex

# typedefs of the C/C++ headers, on the LP64 targets of ROCm (as the mangling resolves them)
STD_TYPEDEFS = {"size_t": "unsigned long", "ptrdiff_t": "long", "ssize_t": "long", "intptr_t": "long",
                "uintptr_t": "unsigned long", "int64_t": "long", "int32_t": "int", "int16_t": "short",
                "int8_t": "signed char", "uint64_t": "unsigned long", "uint32_t": "unsigned int",
                "uint16_t": "unsigned short", "uint8_t": "unsigned char", "uint": "unsigned int",
                "ushort": "unsigned short"}
_INT_WORDS = ("signed", "unsigned", "short", "long", "int", "char", "double")


def builtin(words: list[str]) -> str:
    """`unsigned long long int` -> `unsigned long long` (the mangling's spelling)."""
    counts = {w: words.count(w) for w in _INT_WORDS}
    if counts["double"]:
        return "long double" if counts["long"] else "double"
    if counts["char"]:
        return "unsigned char" if counts["unsigned"] else ("signed char" if counts["signed"] else "char")
    size = "short" if counts["short"] else ("long long" if counts["long"] >= 2 else ("long" if counts["long"] else "int"))
    return f"unsigned {size}" if counts["unsigned"] else size


_WORD = LazyRegex(r"[A-Za-z_]\w*")


def type_spelling(node, data: bytes, name_of) -> str:
    """The type of a `parameter_declaration` / `type_descriptor` node, each type name mapped by
    `name_of`, typedefs of the data resolved, qualifiers east of what they qualify, top-level
    qualifiers and the parameter's name dropped (`const cudaStream_t s` -> `ihipStream_t *`)."""
    tnode = node.child_by_field_name("type")
    if tnode is None:
        return _text(node, data)
    base = _base(tnode, data, name_of)
    quals = [c for c in node.children if c.type == "type_qualifier"]
    out = base.split()
    if any(_text(q, data) == "const" for q in quals):
        out.append("const")
    if any(_text(q, data) == "volatile" for q in quals):
        out.append("volatile")
    decl = node.child_by_field_name("declarator")
    out.extend(_declarator(decl, data))
    while out and out[-1] in ("const", "volatile"):
        out.pop()  # a top-level qualifier is not part of a parameter's type
    return " ".join(out)


def _text(node, data: bytes) -> str:
    return " ".join(data[node.start_byte:node.end_byte].decode("utf-8", "replace").split())


def _base(tnode, data: bytes, name_of) -> str:
    kind = tnode.type
    text = _text(tnode, data)
    if kind == "primitive_type":
        return STD_TYPEDEFS.get(text, text)
    if kind == "sized_type_specifier":
        words = _WORD.findall(text)
        rest = [w for w in words if w not in _INT_WORDS]
        return " ".join(rest) if rest else builtin(words)
    if kind == "type_identifier":
        return name_of(text)
    if kind in ("struct_specifier", "enum_specifier", "union_specifier", "class_specifier"):
        name = tnode.child_by_field_name("name")
        return name_of(_text(name, data)) if name is not None else text
    # qualified or template types: their names mapped one by one
    return _WORD.sub(lambda m: name_of(m.group()), text)


def _declarator(decl, data: bytes) -> list[str]:
    out: list[str] = []
    while decl is not None:
        kind = decl.type
        if kind in ("pointer_declarator", "abstract_pointer_declarator"):
            out.append("*")
            out.extend(_text(c, data) for c in decl.children if c.type == "type_qualifier")
        elif kind in ("reference_declarator", "abstract_reference_declarator"):
            out.append("&&" if any(c.type == "&&" for c in decl.children) else "&")
        elif kind in ("array_declarator", "abstract_array_declarator"):
            out.append("*")  # an array parameter is a pointer
        elif kind in ("parenthesized_declarator", "abstract_parenthesized_declarator", "function_declarator",
                      "abstract_function_declarator"):
            out.append(_text(decl, data))  # function pointers: as written
            return out
        else:
            return out  # the parameter's name
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in decl.named_children if c.type != "type_qualifier"), None)
        decl = inner
    return out
