"""Combinatorial semi-bandits (oracle-efficient paper): actions, oracles, rewards, policies."""
