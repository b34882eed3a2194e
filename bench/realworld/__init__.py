"""The real-world corpus harness (bench/real_world.py is its command)."""
