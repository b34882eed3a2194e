"""`#if` / `#elif` conditions: the one lexer, parser and evaluator of preprocessor expressions.

A condition is read from the directive's text (its lines joined, comments dropped), parsed once
per text into a small expression tree, and evaluated three-valued against a build (macros.py):
a number, or None where the value depends on what the build does not decide (a project macro,
a -D flag, which headers were included). `0 && x` is 0 and `1 || x` is 1 whatever x is, so a
condition can be decided with parts of it unknown. Whatever the parser cannot read (a function-
like macro, `__has_include(...)`, a character literal, text that is no expression) is unknown.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, NamedTuple

from ...lazy_regex import LazyRegex

# (defined, value) of a macro in a build: (True, 3) defined as 3, (True, None) defined with a
# value not known, (False, None) not defined (0 in an expression), (None, None) not known; a value
# known while whether the macro is defined is not, (None, 3), reads as 3 and `defined` unknown.
State = tuple["bool | None", "int | None"]
Build = Callable[[str], State]
UNKNOWN: State = (None, None)
UNDEFINED: State = (False, None)

_TOKEN = LazyRegex(r"""
    (?P<space>\s+)
  | (?P<num>\.?[0-9](?:[eEpP][+-]|[0-9A-Za-z_.'])*)
  | (?P<char>(?:u8|[uUL])?'(?:\\.|[^'\\\n])*')
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^!~?:(),])
""", re.X)
_NUMBER = LazyRegex(r"(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)(?:[uU]?[lL]{0,2}|[lL]{1,2}[uU]?)$")
_COMMENTS = LazyRegex(r"/\*.*?\*/|//[^\n]*", re.S)
_CONTINUATION = LazyRegex(r"\\\r?\n")


class Expr(NamedTuple):
    """A node of a parsed condition. `op`: "num" (value), "id" (name), "defined" (name), "call"
    (name: a function-like macro or `__has_include`, unknown), "?" (a literal that is no
    integer, unknown), a unary operator ("u!", "u-",
    "u+", "u~": args), a binary one, or "?:"."""

    op: str
    args: tuple


def number(text: str) -> int | None:
    """The value of an integer literal (suffixes, digit separators), None for anything else."""
    got = literal(text)
    return None if got is None else got[0]


def literal(text: str) -> tuple[int, bool] | None:
    """(value, unsigned) of an integer literal, None for anything else."""
    m = _NUMBER.match(text)
    if m is None:
        return None
    unsigned = "u" in text[m.end(1):].lower()
    digits = m.group(1).replace("'", "")
    try:
        if digits[:2] in ("0x", "0X"):
            return int(digits, 16), unsigned
        if digits[:2] in ("0b", "0B"):
            return int(digits[2:], 2), unsigned
        if len(digits) > 1 and digits[0] == "0":
            return int(digits, 8), unsigned
        return int(digits), unsigned
    except ValueError:
        return None


def clean(text: str) -> str:
    """A directive's text as one line: continuations joined, comments dropped."""
    return _COMMENTS.sub(" ", _CONTINUATION.sub(" ", text))


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"unexpected {text[pos]!r}")
        kind = m.lastgroup
        if kind != "space":
            out.append((kind, m.group()))
        pos = m.end()
    return out


# binary operators by precedence, loosest first
_LEVELS = (("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="), ("<<", ">>"),
           ("+", "-"), ("*", "/", "%"))
_LEVEL_OF = {op: k for k, ops in enumerate(_LEVELS) for op in ops}


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]):
        self.tokens = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.tokens):
            raise ValueError("unexpected end")
        self.i += 1
        return self.tokens[self.i - 1]

    def expect(self, text: str) -> None:
        if self.take()[1] != text:
            raise ValueError(f"expected {text!r}")

    def conditional(self) -> Expr:
        cond = self.binary(0)
        if self.peek() != "?":
            return cond
        self.take()
        yes = self.conditional()
        self.expect(":")
        return Expr("?:", (cond, yes, self.conditional()))

    def binary(self, level: int) -> Expr:
        if level == len(_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while True:
            op = self.peek()
            if op is None or _LEVEL_OF.get(op) != level or self.tokens[self.i][0] != "op":
                return left
            self.take()
            left = Expr(op, (left, self.binary(level + 1)))

    def unary(self) -> Expr:
        kind, text = self.take()
        if kind == "op":
            if text in ("!", "-", "+", "~"):
                return Expr("u" + text, (self.unary(),))
            if text == "(":
                inner = self.conditional()
                self.expect(")")
                return inner
            raise ValueError(f"unexpected {text!r}")
        if kind == "num":
            got = literal(text)
            return Expr("?", (text,)) if got is None else Expr("num", got)
        if kind == "id":
            if text == "defined":
                paren = self.peek() == "("
                if paren:
                    self.take()
                name_kind, name = self.take()
                if name_kind != "id":
                    raise ValueError("defined without a name")
                if paren:
                    self.expect(")")
                return Expr("defined", (name,))
            if self.peek() == "(":  # a function-like macro, __has_include(...): unknown
                self._skip_arguments()
                return Expr("call", (text,))
            if text in ("true", "false"):  # C++: the keywords keep their value in #if
                return Expr("num", (int(text == "true"), False))
            return Expr("id", (text,))
        if kind == "string":
            raise ValueError("a string literal")
        return Expr("?", (text,))  # a character literal

    def _skip_arguments(self) -> None:
        depth = 0
        while True:
            _, text = self.take()
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
                if depth == 0:
                    return


@lru_cache(maxsize=4096)
def parse(text: str) -> Expr | None:
    """The expression of a condition's text (None: not an expression this reader understands).
    Kept per text: a file's conditions are evaluated in several builds, and headers repeat."""
    text = clean(text)
    if "<" in text and "__has_include" in text:  # `<a/b.h>` is a header name, not operators
        text = re.sub(r"(__has_include(?:_next)?\s*\(\s*)<[^>]*>", r'\1""', text)
    try:
        tokens = _tokens(text)
        if not tokens:
            return None
        parser = _Parser(tokens)
        expr = parser.conditional()
        if parser.i != len(tokens):
            return None
        return expr
    except (ValueError, IndexError, RecursionError):
        return None


def value(expr: Expr | None, build: Build) -> int | None:
    """The value of a parsed condition in `build` (None: cannot tell). Arithmetic is in 64 bits
    as the preprocessor's: unsigned where an operand is (`~0u`, `-1 < 0u`), else signed."""
    if expr is None:
        return None
    op, args = expr
    if op == "num":
        return args[0]
    if op == "id":
        defined, v = build(args[0])
        return 0 if defined is False else v
    if op == "defined":
        defined = build(args[0])[0]
        return None if defined is None else int(defined)
    if op in ("?", "call"):
        return None
    if op[0] == "u" and len(op) == 2:
        v = value(args[0], build)
        if v is None:
            return None
        if op == "u!":
            return int(not v)
        v = -v if op == "u-" else (~v if op == "u~" else v)
        return v & _MASK if unsigned(args[0]) else v
    if op == "?:":
        c = value(args[0], build)
        if c is not None:
            return value(args[1] if c else args[2], build)
        a, b = value(args[1], build), value(args[2], build)
        return a if a is not None and a == b else None
    a = value(args[0], build)
    if op == "&&" and a == 0:
        return 0
    if op == "||" and a is not None and a != 0:
        return 1
    b = value(args[1], build)
    if op == "&&":
        if b == 0:
            return 0
        return None if a is None or b is None else 1
    if op == "||":
        if b is not None and b != 0:
            return 1
        return None if a is None or b is None else 0
    if a is None or b is None:
        return None
    if op in ("<<", ">>"):
        if b < 0 or b >= 64:
            return None
        v = a << b if op == "<<" else a >> b
        return v & _MASK if unsigned(args[0]) else v
    if unsigned(args[0]) or unsigned(args[1]):
        a, b = a & _MASK, b & _MASK
        v = _arithmetic(op, a, b)
        return v if v is None or op in _COMPARISONS else v & _MASK
    return _arithmetic(op, a, b)


_MASK = (1 << 64) - 1
_COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})


def unsigned(expr: Expr) -> bool:
    """Whether an expression has an unsigned type: an unsigned literal, or arithmetic on one
    (a macro's value counts as signed: its spelling is not known here)."""
    op, args = expr
    if op == "num":
        return args[1]
    if op in ("u-", "u+", "u~", "<<", ">>"):
        return unsigned(args[0])
    if op == "?:":
        return unsigned(args[1]) or unsigned(args[2])
    if op in ("+", "-", "*", "/", "%", "&", "|", "^"):
        return unsigned(args[0]) or unsigned(args[1])
    return False


def _arithmetic(op: str, a: int, b: int) -> int | None:
    if op in ("/", "%"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # C: towards zero
        return q if op == "/" else a - b * q
    return _OPS[op](a, b)


_OPS = {
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
}


def truth(text: str, build: Build) -> bool | None:
    """Whether the condition `text` holds in `build` (None: cannot tell)."""
    v = value(parse(text), build)
    return None if v is None else v != 0


def names(expr: Expr | None) -> list[str]:
    """The macro names a condition tests, in order (`defined` operands included)."""
    out: list[str] = []

    def walk(e: Expr) -> None:
        if e.op in ("id", "defined", "call"):
            out.append(e.args[0])
            return
        if e.op in ("num", "?"):
            return
        for a in e.args:
            walk(a)

    if expr is not None:
        walk(expr)
    return out


def requirements(expr: Expr | None) -> frozenset[tuple[str | None, bool]] | None:
    """What a condition requires where it is plain: a conjunction of `defined(X)` /
    `!defined(X)` terms (other terms ignored) gives {(X, True), (X, False)}; `0`, never true,
    gives {(None, False)}; None where the condition is a disjunction or not read."""
    if expr is None:
        return None
    if expr.op == "num" and expr.args[0] == 0:
        return frozenset({(None, False)})
    out = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if e.op == "&&":
            stack.extend(e.args)
        elif e.op == "||":
            return None
        elif e.op == "defined":
            out.add((e.args[0], True))
        elif e.op == "u!" and e.args[0].op == "defined":
            out.add((e.args[0].args[0], False))
        elif _has_or(e):
            return None
    return frozenset(out)


def _has_or(e: Expr) -> bool:
    if e.op == "||":
        return True
    return e.op not in ("num", "id", "defined", "call", "?") and any(_has_or(a) for a in e.args)
