"""Headers of the C and C++ standard libraries and of POSIX: they neither need the HIP runtime nor
change what it declares, so the runtime include may come after them."""

from __future__ import annotations

# C11/C17 (ISO/IEC 9899) and the C++ spellings of the C headers (ISO/IEC 14882 [headers]).
_C = """assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal stdalign
stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn string tgmath threads time uchar wchar
wctype""".split()

# C++20 (ISO/IEC 14882:2020 [headers], tables 21-23), plus <ciso646> and <cstdalign> of C++17.
_CXX = """algorithm any array atomic barrier bit bitset charconv chrono codecvt compare complex concepts
condition_variable coroutine deque exception execution filesystem format forward_list fstream
functional future initializer_list iomanip ios iosfwd iostream istream iterator latch limits list
locale map memory memory_resource mutex new numbers numeric optional ostream queue random ranges ratio
regex scoped_allocator semaphore set shared_mutex source_location span sstream stack stdexcept
stop_token streambuf string string_view strstream syncstream system_error thread tuple type_traits
typeindex typeinfo unordered_map unordered_set utility valarray variant vector version""".split()

# POSIX.1-2017 headers that CUDA host code commonly includes.
_POSIX = """dirent dlfcn fcntl getopt libgen malloc pthread sched semaphore strings unistd""".split()

STANDARD_HEADERS = frozenset(
    [f"{name}.h" for name in _C]
    + [f"c{name}" for name in _C]
    + ["ciso646", "cstdalign"]
    + _CXX
    + [f"{name}.h" for name in _POSIX]
)


def is_standard_header(name: str) -> bool:
    """`<cstdio>`, `<stdio.h>`, `<vector>`, `<unistd.h>`, `<sys/time.h>`..."""
    return name in STANDARD_HEADERS or name.startswith("sys/")
