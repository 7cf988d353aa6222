"""Entry point of ``panel serve dashboard`` (placeholder until the dashboard lands)."""

import panel as pn

pn.extension()

pn.Column(
    "# Bandit teaching dashboard",
    "The live dashboard is being built; see the README for the CLI meanwhile.",
).servable(title="Bandit teaching dashboard")
