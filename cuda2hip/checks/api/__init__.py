"""Headers and APIs (rules/api, HIP1xx): the name tables and header maps, what the migration
leaves (leftovers, legacy APIs, the runtime include), the forms of calls, fields, device
functions and types that differ, and the collisions renaming makes."""
