"""CMake commands as data: the command name and its arguments with the byte span of each
argument's value (inside the quotes of a quoted argument), read from a tree-sitter-cmake tree."""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

# Node kinds that carry an argument list: `normal_command` plus the flow-control commands
# (`if_command`, `foreach_command`, ...), which the grammar names after their keyword.
COMMAND_KINDS = frozenset({
    "normal_command", "if_command", "elseif_command", "else_command", "endif_command",
    "foreach_command", "endforeach_command", "while_command", "endwhile_command",
    "function_command", "endfunction_command", "macro_command", "endmacro_command",
    "block_command", "endblock_command",
})


@dataclass(frozen=True)
class Argument:
    node: ts.Node
    index: int
    start: int  # value span (quotes excluded)
    end: int
    text: str
    quoted: bool
    bracket: bool


@dataclass(frozen=True)
class Command:
    node: ts.Node
    name: str  # lower case: CMake command names are case-insensitive
    args: tuple[Argument, ...]

    @property
    def start(self) -> int:
        return self.node.start_byte

    @property
    def end(self) -> int:
        return self.node.end_byte

    def values(self) -> list[str]:
        return [a.text for a in self.args]


def _argument(node: ts.Node, index: int, data: bytes) -> Argument:
    inner = node.named_children[0] if node.named_children else node
    start, end = inner.start_byte, inner.end_byte
    quoted = inner.type == "quoted_argument"
    bracket = inner.type == "bracket_argument"
    if quoted:
        start, end = start + 1, max(start + 1, end - 1)
    elif bracket:
        content = next((c for c in inner.named_children if c.type == "bracket_argument_content"), None)
        if content is not None:
            start, end = content.start_byte, content.end_byte
    return Argument(node, index, start, end, data[start:end].decode("utf-8", "replace"), quoted, bracket)


def command_of(node: ts.Node, data: bytes) -> Command | None:
    if node.type not in COMMAND_KINDS or not node.children:
        return None
    name = data[node.children[0].start_byte:node.children[0].end_byte].decode("utf-8", "replace").lower()
    args: list[Argument] = []
    for child in node.named_children:
        if child.type == "argument_list":
            for arg in child.named_children:
                if arg.type == "argument":
                    args.append(_argument(arg, len(args), data))
    return Command(node, name, tuple(args))


def file_commands(ctx) -> list[Command]:
    """Every command of the file, in order (cached per file)."""
    cache = ctx.file_cache
    if "cmake-commands" not in cache:
        out = []
        stack = [ctx.tree.root_node]
        while stack:
            node = stack.pop()
            cmd = command_of(node, ctx.data)
            if cmd is not None:
                out.append(cmd)
                continue
            stack.extend(reversed(node.children))
        cache["cmake-commands"] = out
    return cache["cmake-commands"]


def line_indent(data: bytes, pos: int) -> str:
    start = data.rfind(b"\n", 0, pos) + 1
    i = start
    while i < len(data) and data[i:i + 1] in (b" ", b"\t"):
        i += 1
    return data[start:i].decode()
