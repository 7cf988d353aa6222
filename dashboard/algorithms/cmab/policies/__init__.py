"""Policies for combinatorial semi-bandits."""
