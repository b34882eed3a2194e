"""HIP149: a Thrust algorithm called without its header (`thrust::sequence(...)` in a file that
includes only `thrust/sort.h`). CUDA's Thrust headers include one another more widely than
rocThrust's: code that builds with nvcc because `thrust/sort.h` happens to bring in
`thrust/sequence.h` fails with rocThrust ("no member named 'sequence' in namespace 'thrust'",
rocThrust 6.4). The fix includes the header Thrust documents for the algorithm."""

from __future__ import annotations

from ...engine.builders import BuiltFix, fix_builder
from ...engine.pattern import capture
from ...engine.predicates import predicate
from ...findings import Edit
from ...lang.cxx.preprocessor.layout import scan
from ...lang.cxx.syntax import text
from .std_headers_dropped import insertion_point

# algorithm -> the header that declares it (Thrust's and rocThrust's `thrust/*.h`, one per family)
_FAMILIES = {
    "sequence.h": "sequence",
    "fill.h": "fill fill_n",
    "generate.h": "generate generate_n",
    "tabulate.h": "tabulate",
    "transform.h": "transform transform_if",
    "for_each.h": "for_each for_each_n",
    "reduce.h": "reduce reduce_by_key",
    "transform_reduce.h": "transform_reduce",
    "inner_product.h": "inner_product",
    "scan.h": "inclusive_scan exclusive_scan inclusive_scan_by_key exclusive_scan_by_key",
    "transform_scan.h": "transform_inclusive_scan transform_exclusive_scan",
    "sort.h": "sort sort_by_key stable_sort stable_sort_by_key is_sorted is_sorted_until",
    "count.h": "count count_if",
    "find.h": "find find_if find_if_not",
    "extrema.h": "min_element max_element minmax_element",
    "gather.h": "gather gather_if",
    "scatter.h": "scatter scatter_if",
    "unique.h": "unique unique_copy unique_by_key unique_by_key_copy",
    "remove.h": "remove remove_if remove_copy remove_copy_if",
    "replace.h": "replace replace_if replace_copy replace_copy_if",
    "reverse.h": "reverse reverse_copy",
    "partition.h": "partition partition_copy stable_partition stable_partition_copy is_partitioned",
    "logical.h": "all_of any_of none_of",
    "equal.h": "equal",
    "mismatch.h": "mismatch",
    "merge.h": "merge merge_by_key",
    "adjacent_difference.h": "adjacent_difference",
    "binary_search.h": "lower_bound upper_bound binary_search equal_range",
    "uninitialized_fill.h": "uninitialized_fill uninitialized_fill_n",
    "uninitialized_copy.h": "uninitialized_copy uninitialized_copy_n",
}
HEADER_OF = {name: f"thrust/{header}" for header, names in _FAMILIES.items() for name in names.split()}


def _included(ctx, header: str) -> bool:
    """`header` is included by the file or by a project header it includes (any depth)."""
    cache = ctx.file_cache
    key = "thrust-headers:included"
    if key not in cache:
        from ...lang.cxx.includes import local_header

        found: set[str] = set()
        seen: set[str] = set()

        def walk(path: str, data: bytes, depth: int) -> None:
            for inc in scan(data).includes:
                found.add(inc.header)
                if depth < 8 and not inc.header.startswith(("thrust/", "cub/", "hip", "cuda")):
                    got = local_header(path, inc.header, ctx.settings.root)
                    if got is not None and got[0] not in seen:
                        seen.add(got[0])
                        walk(got[0], got[1], depth + 1)

        walk(ctx.path, ctx.file_context.data, 0)
        cache[key] = found
    return header in cache[key]


@predicate("thrust-header-missing", requires=("thrust",))
def thrust_header_missing(node, env, ctx, args):
    """`thrust::X(...)` where the file does not include X's header; once per header and file.
    Adds $NAME, $HEADER."""
    fn = node.child_by_field_name("function")
    if fn is None or fn.type != "qualified_identifier" or ctx.is_fragment:
        return False
    scope, name = fn.child_by_field_name("scope"), fn.child_by_field_name("name")
    if text(scope, ctx.data) != "thrust" or name is None or name.type != "identifier":
        return False
    header = HEADER_OF.get(text(name, ctx.data))
    if header is None or _included(ctx, header):
        return False
    reported = ctx.file_cache.setdefault("thrust-headers:reported", set())
    if header in reported:
        return False
    reported.add(header)
    return {"NAME": capture(fn, ctx.data), "HEADER": capture(fn, ctx.data, header)}


@fix_builder("include-thrust-header")
def include_thrust_header(match, ctx, rule):
    header = match.env["HEADER"].text
    pos = insertion_point(ctx, match.node.start_byte)
    text_ = f"#include <{header}>\n"
    if pos > 0 and ctx.data[pos - 1:pos] != b"\n":
        text_ = "\n" + text_
    return BuiltFix([Edit(pos, pos, text_)], description=f"Include <{header}>")
