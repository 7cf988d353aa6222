"""The bandit teaching dashboard: oracle-efficient combinatorial semi-bandits and semiparametric
bandits, live in Panel/HoloViews. Importing this package has no side effects."""

__version__ = "0.1.0"
