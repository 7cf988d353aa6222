"""Textbook engines of the combinatorial semi-bandit algorithms: one repetition, round by
round, in the paper's names, one file per algorithm (the files a student reads).  Their fast
engines live in :mod:`dashboard.algorithms.cmab.policies` and reproduce their numbers."""
