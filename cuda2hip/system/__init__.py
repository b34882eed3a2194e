"""The operating system as cuda2hip meets it: reads and writes that never follow a swapped link
(nofollow.py), whom a file or folder may be trusted from (trust.py), the signals that end a run
(signals.py). The bottom layer: it imports nothing of cuda2hip."""
