"""Policies for semiparametric bandits."""
