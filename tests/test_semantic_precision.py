"""tools/semantic_precision.py: a stable sample, the counts of the table, the table in the docs."""

import importlib.util
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.rules

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("semantic_precision", ROOT / "tools" / "semantic_precision.py")
sp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sp)


def _found(n: int, code: str = "HIP405") -> dict:
    return {("cb", f"f{i}.cu", i, 1, code): {} for i in range(n)}


def test_a_finding_keeps_its_place_in_the_sample_when_others_go():
    found = _found(80)
    first = sp.sample(found)["HIP405"]
    assert len(first) == sp.SAMPLE
    gone = set(first[:5])  # five false positives fixed
    after = sp.sample({k: v for k, v in found.items() if k not in gone})["HIP405"]
    assert after[:sp.SAMPLE - 5] == first[5:]  # the verdicts given stay in the sample
    assert len(after) == sp.SAMPLE


def test_all_findings_below_the_sample_size_are_sampled():
    assert len(sp.sample(_found(7))["HIP405"]) == 7


def test_table_counts_the_verdicts_of_the_sample_only():
    found = _found(40)
    sampled = sp.sample(found)
    keys = sampled["HIP405"]
    outside = next(k for k in found if k not in keys)
    verdicts = {k: {"verdict": "true"} for k in keys[:27]}
    verdicts.update({k: {"verdict": "false"} for k in keys[27:29]})
    verdicts[outside] = {"verdict": "false"}  # not in the sample: not counted
    lines, todo = sp.table(found, sampled, verdicts)
    assert lines[2] == "| HIP405 | 40 | 29 | 27 | 2 | 93% |"
    assert todo == [keys[29]]


def test_write_table_replaces_what_is_between_the_markers(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n{sp.BEGIN}\nold\n{sp.END}\nrest\n")
    sp.write_table(doc, ["| a |"], _found(1))
    text = doc.read_text()
    assert "old" not in text and "| a |" in text and text.startswith("intro\n") and text.endswith("rest\n")
    assert "Measured on cb " in text
    doc.write_text("no markers\n")
    with pytest.raises(SystemExit):
        sp.write_table(doc, ["| a |"], _found(1))


def _doc_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "semantic-rules.md").read_text()
    block = text.split(sp.BEGIN, 1)[1].split(sp.END, 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines()
            if re.match(r"\| HIP\d{3} ", line)]


def test_the_documented_table_meets_the_goal():
    rows = _doc_rows()
    assert rows, "docs/semantic-rules.md has no precision table (tools/semantic_precision.py --write)"
    for code, findings, reviewed, true, false, precision in rows:
        assert int(true) + int(false) == int(reviewed), code
        assert int(reviewed) == min(int(findings), sp.SAMPLE), f"{code}: sampled findings without a verdict"
        if int(findings) >= 10:
            assert int(true) >= 0.9 * int(reviewed), f"{code}: {precision} precision"


def test_the_documented_verdicts_are_in_the_review_file():
    verdicts = sp.read_verdicts(sp.REVIEW)
    assert all(v["verdict"] in ("true", "false") and v["reason"].strip() for v in verdicts.values())
    for code, _, reviewed, true, false, _ in _doc_rows():
        given = [v["verdict"] for k, v in verdicts.items() if k[4] == code]
        assert given.count("true") >= int(true) and given.count("false") >= int(false), code
