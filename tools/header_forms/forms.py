"""Where the HIP form of a CUDA API differs, from the declarations of both sides
(clang_decls.Declarations): the three payloads of rules/api/data/forms/.

- calls: runtime/driver functions whose HIP form takes a kernel as `const void*` where CUDA has a
  template overload that takes the kernel itself, and functions whose HIP form accepts other
  argument counts than CUDA's (CUDA default arguments HIP lacks, changed signatures);
- fields: fields of CUDA structs that the HIP struct of the same role lacks, and the members of
  cooperative groups' classes (with their bases') that HIP's class of the same name lacks;
- device functions: CUDA device functions HIP does not declare (or declares only for some of
  CUDA's parameter types, or only behind an opt-in macro).

Each fact is per checked HIP release (major.minor), oldest first.
"""

from __future__ import annotations

import re

from .clang_decls import Declarations, Function

# Scalar and vector types both sides spell alike: overloads over them can be compared by spelling.
_SCALAR = (r"void|bool|char|signed char|unsigned char|short|unsigned short|int|unsigned int|long|unsigned long|"
           r"long long|unsigned long long|float|double|size_t|__half|__half2|"
           r"(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]")
_COMPARABLE = re.compile(_SCALAR)
_INTEGRAL = re.compile(r"(?:unsigned |signed )?(?:char|short|int|long|long long)|size_t|unsigned|u?int\d+_t")
_INT_LITERAL = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*")


def norm_type(t: str) -> str:
    """A parameter type as overloads compare: spaces collapsed, top-level const of a by-value
    parameter dropped (it is not part of the function's type)."""
    t = re.sub(r"\s+", " ", t).strip()
    if "*" not in t and "&" not in t:
        t = re.sub(r"\b(?:const|volatile) ", "", t)
    t = re.sub(r"(?<=[*&]) ?(?:const|volatile)$", "", t)  # a `T *const p` parameter is a `T *` one
    return t.replace(" *", "*").replace(" &", "&")


def signature(f: Function) -> tuple[str, ...]:
    return tuple(norm_type(p.type) for p in f.params)


def comparable(sig: tuple[str, ...]) -> bool:
    """Whether every parameter type is a scalar or vector type (or a pointer or reference to one)."""
    return all(_COMPARABLE.fullmatch(" ".join(re.sub(r"\b(?:const|volatile)\b|[*&]", " ", t).split()))
               for t in sig)


# ------------------------------------------------------------------------------ device functions


def device_functions(cuda: dict[str, list[Function]], releases: list[tuple[str, Declarations, dict]],
                     api_names: set[str]) -> dict[str, list]:
    """name -> [CUDA header, [status per release]] for the CUDA device functions some checked
    release lacks. Status: None (declared for every CUDA parameter type that can be compared),
    "no", "-DNAME" (declared only with that opt-in macro), or {"has": [HIP's parameter type lists],
    "lacks": [CUDA's that HIP does not declare]} (declared, but not for all of CUDA's types)."""
    out = {}
    for name, fs in sorted(cuda.items()):
        dev = [f for f in fs if f.device]
        if "::" in name or not dev or name.startswith("operator") or name in api_names:
            continue
        # Overloads over pointers and references: a call that needs one of those has no
        # conversion to fall back on (a `float` argument still converts to HIP's `double`).
        wanted = {sig for f in dev if not f.template and comparable(sig := signature(f))
                  and any(t.endswith(("*", "&")) for t in sig)}
        statuses = []
        for _rocm, decls, options in releases:
            statuses.append(_device_status(name, wanted, decls, options))
        if any(s is not None for s in statuses):
            header = next((f.file for f in dev if f.file.endswith(".h")), dev[0].file)
            out[name] = [header, statuses]
    return out


def _device_status(name: str, wanted: set, decls: Declarations, options: dict[str, Declarations]):
    hip = [f for f in decls.functions.get(name, ()) if f.device]
    if not hip:
        if name in decls.macro_names:
            return None  # a macro of that name (a function-like macro works for calls)
        for opt, more in options.items():
            if any(f.device for f in more.functions.get(name, ())) or name in more.macro_names:
                return f"-D{opt}"
        return "no"
    if any(f.template for f in hip):
        return None  # a template may take any of CUDA's types
    have = {signature(f) for f in hip}
    if wanted - have:
        return {"has": sorted(list(s) for s in have), "lacks": sorted(list(s) for s in wanted - have)}
    return None


# ------------------------------------------------------------------------------ struct fields


def struct_fields(cuda: Declarations, releases: list[tuple[str, Declarations]],
                  table: dict[str, str]) -> dict[str, dict]:
    """CUDA struct -> {"hip": HIP name, "records": {rocm: HIP's record, in the releases that have it},
    "fields": {field: first checked release from which every later one has it, or None}} for
    the CUDA structs with a HIP counterpart (`table`: CUDA name -> HIP name) whose HIP struct
    lacks a field in some checked release (a field of CUDA's struct, or one a later HIP release
    adds)."""
    out = {}
    for name in sorted(set(cuda.records) | set(cuda.typedefs)):
        hip = table.get(name)
        rec = cuda.record(name)
        if not hip or rec is None or name.startswith("<"):
            continue
        hip_recs = [(rocm, decls.record(hip)) for rocm, decls in releases]
        if all(r is None for _, r in hip_recs):
            continue
        # Also the fields a later HIP release's struct adds that CUDA's headers here lack: CUDA
        # fields older CUDA code uses (`deviceOverlap`: not in CUDA 13's cudaDeviceProp, in HIP
        # 6.4's hipDeviceProp_t). HIP's own fields (`hipReserved`, `*HipArraySupported`) are not.
        later = sorted({p for _, r in hip_recs if r is not None for p in r.fields} - set(rec.fields))
        fields = {}
        for path in list(rec.fields) + [p for p in later if "hip" not in p.lower()]:
            since = _since([(rocm, r is not None and path in r.fields) for rocm, r in hip_recs])
            if since != hip_recs[0][0] and (since is not None or path in rec.fields):
                fields[path] = since
        if fields:
            names = {rocm: r.name for rocm, r in hip_recs if r is not None}
            out[name] = {"hip": hip, "records": names, "fields": fields}
    return out


def _since(present: list[tuple[str, bool]]) -> str | None:
    """The first release from which every later one has it (`present`: oldest first)."""
    since = None
    for rocm, has in reversed(present):
        if not has:
            break
        since = rocm
    return since


def class_members(cuda: Declarations, releases: list[tuple[str, Declarations, dict]], namespace: str) -> dict:
    """The classes right in `namespace` (cooperative groups: HIP's have CUDA's names), in the
    form of `struct_fields`: the public members (with their bases') some checked release's class
    of that name lacks. A member HIP declares only behind an opt-in macro is given as
    "ROCM -DNAME" (the first release that declares it so)."""
    out = {}
    for name, members in sorted(cuda.classes.items()):
        if name.rsplit("::", 1)[0] != namespace:
            continue
        hip = [(rocm, decls.classes.get(name)) for rocm, decls, _ in releases]
        order = [rocm for rocm, _ in hip]
        if all(m is None for _, m in hip):
            continue
        fields = {}
        for member in sorted(members):
            since = _since([(rocm, m is not None and member in m) for rocm, m in hip])
            if since == hip[0][0]:
                continue
            fields[member] = since
            for opt in sorted({o for _, _, options in releases for o in options}):
                with_opt = _since([(rocm, member in (options[opt].classes.get(name) or ()))
                                   for rocm, _, options in releases])
                if with_opt is not None and (since is None or order.index(with_opt) < order.index(since)):
                    fields[member] = f"{with_opt} -D{opt}"
                    break
        if fields:
            out[name] = {"hip": name, "records": {rocm: name for rocm, m in hip if m is not None}, "fields": fields}
    return out


# ------------------------------------------------------------------------------ calls


def _kernel_param(fs: list[Function]) -> int | None:
    """The parameter where a template overload takes the kernel itself (`T *func`, `T func`) and
    the C overload takes `const void *`."""
    c_forms = [f for f in fs if not f.template]
    for t in fs:
        if not t.template:
            continue
        for i, p in enumerate(t.params):
            if p.template and "&" not in p.type and any(
                    i < len(c.params) and norm_type(c.params[i].type) == "const void*" for c in c_forms):
                return i
    return None


def _out_pointer_param(fs: list[Function]) -> int | None:
    """The parameter where a template overload takes any `T **` (`cudaMallocPitch(T **devPtr,
    ...)`, which passes `(void**)(void*)devPtr` on) and the C overload takes `void **`."""
    c_forms = [f for f in fs if not f.template]
    for t in fs:
        if not t.template:
            continue
        for i, p in enumerate(t.params):
            if p.template and norm_type(p.type).endswith("**") and any(
                    i < len(c.params) and norm_type(c.params[i].type) == "void**" for c in c_forms):
                return i
    return None


def _accepts(arities, n: int) -> bool:
    return any(lo <= n <= hi for lo, hi in arities)


def _padding(n: int, cuda: list[Function], hip: list[Function], rename) -> list[str] | None:
    """CUDA's default arguments for the parameters n.. that the HIP overload with the fewest
    required arguments above n requires, where each converts to HIP's parameter type with the
    same value; None if that is not so."""
    above = [f for f in hip if f.arity[0] > n and not f.template] or [f for f in hip if f.arity[0] > n]
    if not above:
        return None
    target = min(above, key=lambda f: f.arity[0])
    used = [f for f in cuda if f.arity[0] <= n <= f.arity[1]]  # the CUDA overloads such a call can be
    values = []
    for j in range(n, target.arity[0]):
        if any(j >= len(f.params) for f in used):
            return None  # HIP wants a parameter CUDA does not have: another signature
        defaults = {(f.params[j].default, norm_type(f.params[j].type)) for f in used}
        if len(defaults) != 1 or None in next(iter(defaults)):
            return None
        ((default, cuda_type),) = defaults
        hip_type = norm_type(target.params[j].type)
        same = norm_type(rename(cuda_type)) == hip_type
        both_integral = (_INTEGRAL.fullmatch(cuda_type) and _INTEGRAL.fullmatch(hip_type)
                         and _INT_LITERAL.fullmatch(default))
        if not (same or both_integral):
            return None
        values.append(rename(default))
    return values


def _forwarded(n: int, cuda: list[Function], decls: Declarations, table: dict[str, str]) -> str | None:
    """The HIP name of G where CUDA's overload for n arguments is `return ::G(same arguments);`
    and HIP's G takes n arguments."""
    targets = {f.forwards_to for f in cuda if f.arity[0] <= n <= f.arity[1]}
    if len(targets) != 1 or None in targets:
        return None
    hip = table.get(targets.pop())
    if hip and _accepts([f.arity for f in decls.functions.get(hip, ())], n):
        return hip
    return None


def calls(cuda: Declarations, releases: list[tuple[str, Declarations]], table: dict[str, str],
          rename) -> dict[str, dict]:
    """CUDA function -> {"hip", "kernel_param", "out_param", "cuda_arity", "releases": {rocm: {"arities",
    "kernel_templates", "pointer_templates", "pad": {n: [defaults] | None}, "instead": {n: HIP function that CUDA's
    overload for n arguments forwards to}}}} for the runtime/driver functions
    (`table`: CUDA name -> HIP name) whose HIP form takes the kernel as `const void*` or accepts
    other argument counts. `rename(type text)` spells a CUDA type with HIP names."""
    out = {}
    for name, fs in sorted(cuda.functions.items()):
        hip = table.get(name)
        if not hip or "::" in name:
            continue
        kernel = _kernel_param(fs)
        out_param = _out_pointer_param(fs)
        cuda_arities = sorted({f.arity for f in fs})
        lo, hi = min(a[0] for a in cuda_arities), max(a[1] for a in cuda_arities)
        rows = {}
        differs = False
        for rocm, decls in releases:
            hfs = [f for f in decls.functions.get(hip, ()) if f.host or not f.device]
            if not hfs:
                continue
            arities = sorted({f.arity for f in hfs})
            row = {"arities": [list(a) for a in arities]}
            if kernel is not None:
                temps = sorted({f.arity for f in hfs if f.template and kernel < len(f.params)
                                and f.params[kernel].template})
                row["kernel_templates"] = [list(a) for a in temps]
                differs |= any(not _accepts(temps, n) for n in range(lo, hi + 1) if _accepts(cuda_arities, n))
            if out_param is not None:
                temps = sorted({f.arity for f in hfs if f.template and out_param < len(f.params)
                                and f.params[out_param].template})
                row["pointer_templates"] = [list(a) for a in temps]
                differs |= any(not _accepts(temps, n) for n in range(lo, hi + 1) if _accepts(cuda_arities, n))
            pad, instead = {}, {}
            for n in range(lo, hi + 1):
                if _accepts(cuda_arities, n) and not _accepts(arities, n):
                    pad[str(n)] = _padding(n, fs, hfs, rename)
                    other = _forwarded(n, fs, decls, table)
                    if pad[str(n)] is None and other:
                        instead[str(n)] = other
            if pad:
                row["pad"] = pad
                differs = True
            if instead:
                row["instead"] = instead
            rows[rocm] = row
        if rows and differs:
            out[name] = {"hip": hip, "kernel_param": kernel, "out_param": out_param, "cuda_arity": [lo, hi],
                         "releases": rows}
    return out


def overloaded(cuda: Declarations, releases: list[tuple[str, Declarations]], table: dict[str, str],
               c_api: set[str]) -> dict[str, dict]:
    """CUDA function -> {"hip", "releases": [rocm]} for the runtime/driver functions CUDA declares
    once (no overloads, no template; `c_api`: the driver API's names, which cuda.h declares in C)
    whose HIP counterpart is overloaded in those releases (`cuMemAlloc` -> `hipMalloc`, which has
    a `template <class T> hipMalloc(T**, size_t)` too): code that takes the function's address
    (`&cuMemAlloc`) names one function in CUDA and an overload set in HIP."""
    out = {}
    for name, hip in sorted(table.items()):
        if "::" in name:
            continue
        fs = cuda.functions.get(name, ())
        single = (len(fs) == 1 and not fs[0].template) or (not fs and name in c_api)
        if not single:
            continue
        rels = [rocm for rocm, decls in releases
                if len([f for f in decls.functions.get(hip, ()) if f.host or not f.device]) > 1]
        if rels:
            out[name] = {"hip": hip, "releases": rels}
    return out
