"""choose_fixes picks the same conflict-free subset as comparing every pair (it only looks at
neighbours, which is what keeps files with thousands of fixes fast)."""

from __future__ import annotations

import random
import time

from cuda2hip.findings import Applicability, Edit, Fix
from cuda2hip.fix.apply import _conflicts, choose_fixes


def _pairwise(fixes):
    accepted, taken = [], []
    for fix in sorted(fixes, key=lambda f: (f.edits[0].start, f.edits[-1].end) if f.edits else (0, 0)):
        if not fix.edits or any(_conflicts(e, t) for e in fix.edits for t in taken):
            continue
        accepted.append(fix)
        taken.extend(fix.edits)
    return accepted


def _random_fix(rng, size):
    # The edits of one fix never overlap each other (apply_edits refuses that).
    edits = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        start = rng.randrange(size)
        end = start + rng.choice((0, 0, 1, 2, 5, 20))
        edit = Edit(start, end, "x")
        if not any(_conflicts(edit, e) for e in edits):
            edits.append(edit)
    edits.sort(key=lambda e: (e.start, e.end))
    return Fix(Applicability.SAFE, tuple(edits))


def test_same_choice_as_pairwise_comparison():
    rng = random.Random(7)
    for _ in range(400):
        size = rng.choice((10, 50, 300))
        fixes = [_random_fix(rng, size) for _ in range(rng.randrange(1, 60))]
        assert choose_fixes(fixes) == _pairwise(fixes)


def test_many_fixes_scale():
    fixes = [Fix(Applicability.SAFE, (Edit(i * 10, i * 10 + 4, "hip"),)) for i in range(20000)]
    t = time.perf_counter()
    chosen = choose_fixes(fixes)
    assert len(chosen) == 20000
    assert time.perf_counter() - t < 2.0  # the pairwise version takes minutes here
