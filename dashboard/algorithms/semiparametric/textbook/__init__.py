"""Textbook engines of the semiparametric baselines and foils: one repetition, round by
round, in the papers' names, one file per algorithm (the files a student reads).  Their fast
engines live in :mod:`dashboard.algorithms.semiparametric.policies` and reproduce their
numbers."""
