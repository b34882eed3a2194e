"""Headers and APIs (rules/api, HIP1xx): the name tables and header maps, what the migration
leaves (leftovers, legacy APIs, the runtime include), the forms of calls, fields, device
functions and types that differ, and the collisions renaming makes."""

from . import (constexpr_math, deprecated_api, device_functions, forms, hip_collisions, host_math,  # noqa: F401
               include, leftovers, legacy_api, rename, rename_collisions, runtime_include, std_headers_dropped,
               struct_fields, type_forms)
