"""Typed schema of a rule file. One YAML file holds one rule: what it matches, its message,
its fix, its docs and its own test cases. Validation is done by msgspec, which names the
offending field; the loader adds the file and the rule id.

No `from __future__ import annotations`: msgspec resolves string annotations with typing's
evaluator (a `compile` each, ~100 of them, on the first read of the rule cache); only the
self-references are strings.
"""

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct, field

Code = Annotated[str, Meta(pattern=r"^[A-Z]{2,5}[0-9]{3}$")]
KebabId = Annotated[str, Meta(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")]
SeverityName = Literal["hint", "info", "warning", "error"]
ApplicabilityName = Literal["safe", "unsafe", "display-only"]
EffortName = Literal["none", "low", "medium", "high"]


class _Strict(Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True):
    pass


class PatternSpec(_Strict, kw_only=True):
    """A pattern that needs surrounding code to parse: `context` is parsed and the first node
    of kind `selector` inside it becomes the pattern (ast-grep's pattern object)."""

    context: str
    selector: str


class CheckSpec(_Strict, kw_only=True):
    """A named Python predicate (see cuda2hip/match/predicates.py) with arguments."""

    name: str
    args: dict[str, Any] = {}


class MatchRule(_Strict, kw_only=True):
    """ast-grep style rule object: atomic keys (pattern, kind, regex, query, check), relational
    keys (inside, has, follows, precedes) and composites (all, any, not). A node matches when
    every key present matches."""

    pattern: str | PatternSpec | None = None
    kind: str | None = None
    callee: list[str] | None = None  # a call whose function name (last component) is one of these
    regex: str | None = None
    query: str | None = None
    check: str | CheckSpec | None = None
    inside: "Relation | None" = None
    has: "Relation | None" = None
    follows: "Relation | None" = None
    precedes: "Relation | None" = None
    all: "list[MatchRule] | None" = None
    any: "list[MatchRule] | None" = None
    not_: "MatchRule | None" = field(default=None, name="not")


class Relation(MatchRule, kw_only=True):
    # neighbor: only the parent / direct children / adjacent sibling; end: search all the way;
    # a rule: search until (and including) the first node that matches it.
    stopBy: "Literal['neighbor', 'end'] | MatchRule" = "neighbor"


class FixSpec(_Strict, kw_only=True):
    applicability: ApplicabilityName
    template: str | None = None  # replaces the matched node (or `target`); `$X` = capture text
    builder: str | None = None  # a Python fix builder (cuda2hip/match/builders.py)
    target: str | None = None  # capture whose node the template replaces
    description: str | None = None


class Docs(_Strict, kw_only=True):
    what: str
    why: str
    example: str = ""
    use_instead: str = ""
    fix_safety: str = ""
    options: str = ""
    references: list[str] = []


class ValidCase(_Strict, kw_only=True):
    code: str
    select: list[str] = []  # other rules to run alongside (e.g. for suppression tests)
    options: dict[str, Any] = {}
    filename: str | None = None
    settings: dict[str, Any] = {}


class InvalidCase(_Strict, kw_only=True):
    code: str
    fixed: str | None = None  # expected output of `fix` (with --unsafe-fixes for unsafe fixes)
    count: int | None = None  # expected number of findings of this rule
    message: str | None = None  # a substring every finding's message must contain
    select: list[str] = []  # other rules to run alongside
    options: dict[str, Any] = {}
    filename: str | None = None
    settings: dict[str, Any] = {}


class RuleTests(_Strict, kw_only=True):
    valid: list[str | ValidCase] = []
    invalid: list[str | InvalidCase] = []


class Rule(_Strict, kw_only=True):
    code: Code
    id: KebabId
    kind: str
    language: str = "cuda"
    severity: SeverityName
    summary: str
    message: str
    enabled: bool = True
    effort: EffortName = "low"
    # codes whose findings inside the range of this rule's findings are dropped (one construct,
    # one finding: the rule that knows more says it)
    supersedes: list[Code] = []
    # preprocessor branches where the rule's findings are dropped (lang/cxx/preprocessor: macros.py's builds):
    # "nvcc-only" (hip-clang never compiles them), "hip-only" (only a HIP build compiles them: the
    # project wrote them for AMD GPUs, so a rule about what CUDA code means there has no say)
    skip_branches: list[Literal["nvcc-only", "hip-only"]] = []
    fix: FixSpec | None = None
    docs: Docs
    options: dict[str, Any] = {}
    tests: RuleTests = field(default_factory=RuleTests)
    # kind-specific fields (each kind's compiler checks what it needs)
    headers: dict[str, str | None] | None = None  # include: header -> replacement (None: drop)
    tables: list[str] | None = None  # rename: JSON name tables, relative to the rule file
    names: dict[str, str | None] | None = None  # rename: inline name map
    rule: MatchRule | None = None  # pattern
    constraints: dict[str, MatchRule] | None = None  # pattern: rules on single captures
    params: dict[str, Any] | None = None  # free-form settings for frontend-specific kinds
    # filled in by the loader, never written in YAML
    source_path: str = ""
    builtin: bool = False
    family: str = ""  # the folder of the rule under its rules folder (rules/warp/x.yaml: warp)


def rule_json_schema() -> dict:
    """JSON schema of a rule file (for editors; `cuda2hip rules --json-schema`)."""
    return msgspec.json.schema(Rule)
