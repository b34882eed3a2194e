"""Names of the temporary files atomic writes make (writeback.py): `.NAME.<host>-<pid>.XXXXXXXX`
+ TEMP_SUFFIX. Apart from writeback, so that a tree walk recognises them without importing the
writing code."""

TEMP_SUFFIX = ".cuda2hip-tmp"


def is_temp_name(name: str) -> bool:
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)
