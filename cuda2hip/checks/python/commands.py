"""`command` rule kind: programs run from Python (`subprocess.run(["nvidia-smi", ...])`,
`os.system("rocm-smi --showuse")`, `shutil.which("nvidia-smi")`).

The command is an argument of one of the configured calls: a list or tuple whose first element
names the program, or a string (a shell command line) in which the program appears as a word.
Names are followed to their single assignment. Findings point at the program name itself.
"""

from __future__ import annotations

import re

from ...engine.compiled import rule_kind
from .base import CallArg, Params, PyRule, arguments


class CommandParams(Params):
    programs: list[str]
    calls: list[CallArg]


@rule_kind("command")
class CommandRule(PyRule):
    kinds = frozenset({"Call"})
    params_type = CommandParams

    def __init__(self, rule, settings):
        super().__init__(rule, settings)
        names = "|".join(re.escape(p) for p in sorted(self.params.programs, key=len, reverse=True))
        # a shell word: start of text or after a separator, optionally with a directory
        self.word = re.compile(rf"(?:^|(?<=[\s;&|(`'\"]))(?:[\w.~-]*/)*(?P<prog>{names})(?:\.exe)?(?=$|[\s;&|)`'\"])")

    def file_needles(self):
        return list(self.params.programs)

    def visit(self, call, ctx):
        import libcst as cst

        from ...lang.python.strings import text_of

        module = ctx.module
        for _, callee, value in arguments(call, self.params.calls, module):
            value = module.resolve(value)
            if isinstance(value, (cst.List, cst.Tuple)):
                first = next((e.value for e in value.elements if isinstance(e, cst.Element)), None)
                if first is None:
                    continue
                st = text_of(first, module)
                if st is None:
                    continue
                m = self.word.fullmatch(st.text.value)
                matches = [m] if m else []
            else:
                st = text_of(value, module)
                if st is None:
                    continue
                matches = list(self.word.finditer(st.text.value))
            for m in matches:
                vs = len(st.text.value[:m.start("prog")].encode())
                ve = len(st.text.value[:m.end("prog")].encode())
                start, end = st.text.start(vs), st.text.end(ve)
                ctx.report(self, start, end, self.message(PROGRAM=m.group("prog"), CALL=callee))
