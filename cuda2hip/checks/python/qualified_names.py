"""`qualified-name` rule kind: uses of a module attribute known by its qualified name, however
it was imported (`torch.version.cuda`, `from torch import version; version.cuda`).

The fix renames the last component (`.cuda` -> `.hip`) when the replacement lives in the same
module. With `fix_only_in_conditions`, it is offered only where the value is tested for presence
(`if torch.version.cuda:`, `... is None`): a comparison or any other use of the value is
reported with `notes.value` and no fix.
"""

from __future__ import annotations

from ...engine.compiled import rule_kind
from ...findings import Edit
from .base import Params, PyRule


class QualifiedNameParams(Params):
    names: dict[str, str | None]  # qualified name -> replacement (None: no replacement)
    fix_only_in_conditions: bool = False
    notes: dict[str, str] = {}  # "condition" / "value": $NOTE in the message for each use


@rule_kind("qualified-name")
class QualifiedNameRule(PyRule):
    kinds = frozenset({"Attribute"})
    params_type = QualifiedNameParams

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        self.last = frozenset(n.rsplit(".", 1)[-1] for n in self.params.names)

    def file_needles(self):
        return sorted({n.split(".")[0] for n in self.params.names})

    def visit(self, node, ctx):
        module = ctx.module
        if not module.may_name(node, self.last):
            return
        hits = module.qualified_names(node).intersection(self.params.names)
        if not hits:
            return
        qualified = sorted(hits)[0]
        replacement = self.params.names[qualified]
        condition = _in_condition(node, module)
        note = self.params.notes.get("condition" if condition else "value", "")
        start, end = module.span(node)
        edits = None
        head, _, _ = qualified.rpartition(".")
        if replacement and replacement.rpartition(".")[0] == head and \
                (condition or not self.params.fix_only_in_conditions):
            astart, aend = module.span(node.attr)
            edits = [Edit(astart, aend, replacement.rpartition(".")[2])]
        msg = self.message(NAME=module.text(node), QUALIFIED=qualified, HIP=replacement or "", NOTE=note)
        ctx.report(self, start, end, msg, edits=edits,
                   description=f"Use `{replacement}`" if edits else "")


def _in_condition(node, module) -> bool:
    """Whether the value is only tested for truth or for None."""
    import libcst as cst

    parent = module.parent(node)
    if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)):
        return parent.test is node
    if isinstance(parent, cst.UnaryOperation):
        return isinstance(parent.operator, cst.Not)
    if isinstance(parent, cst.BooleanOperation):
        return _in_condition(parent, module)
    if isinstance(parent, cst.Comparison) and parent.left is node:
        return all(isinstance(c.operator, (cst.Is, cst.IsNot)) and isinstance(c.comparator, cst.Name)
                   and c.comparator.value == "None" for c in parent.comparisons)
    return False
