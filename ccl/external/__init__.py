"""Benchmarks written by others, run on this project's configurations through its own prompt path:
BFCL (the Berkeley Function Calling Leaderboard), scored by BFCL's own checker.

Layer: external. May import every layer but stages; nothing below imports it.
"""
