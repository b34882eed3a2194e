"""A CUDA-looking name the project defines anywhere in a run is the project's, in every file.

HIP190 (unknown CUDA name) knows the names the file itself and the project headers it includes
define. A header that uses a helper defined in another header it does not include (`cudaCheck`
of llm.c's `cuda_common.h`, used by headers that the `.cu` files include after it) needs the
whole run: each file's result says which names it defines (`DEFINED`, on HIP190's info finding)
and which unknown names it reports (`UNKNOWN`), and the run drops the reports of names that
another file defines. Each file's result stays a function of that file alone, so workers and
the result cache need nothing else; the filter runs on every run's results.
"""

from __future__ import annotations

DEFINED = "project_name"  # Finding.extra key: the name this finding's file defines
UNKNOWN = "unknown_name"  # Finding.extra key: the unknown CUDA name reported


def drop_names_defined_elsewhere(results) -> None:
    """Remove from each FileResult the unknown-name findings of names some file of the run defines."""
    defined = {f.extra[DEFINED] for r in results if r is not None for f in r.findings if DEFINED in f.extra}
    if not defined:
        return
    for r in results:
        if r is not None and any(f.extra.get(UNKNOWN) in defined for f in r.findings):
            r.findings = [f for f in r.findings if f.extra.get(UNKNOWN) not in defined]
