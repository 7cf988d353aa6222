"""Semiparametric bandits (experimental-design paper): instances, shifts, design, policies."""
