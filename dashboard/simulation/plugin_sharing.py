"""Plug-ins on Dask workers: a run of a plug-in algorithm may execute in another process.

Registration is per process (docs/PLUGINS.md), so before a run is sent to a cluster the
plug-ins of this process are installed on every worker with a Dask ``WorkerPlugin``:
``--plugin`` files and modules are loaded again by their absolute path or module name, and
classes registered from a notebook (``register_algorithm(MyPolicy)``) travel by value
(cloudpickle).  Workers that join later get them too (Dask runs ``setup`` on new workers).
Installed entry-point plug-ins need nothing: every worker reads them itself.
"""

from __future__ import annotations

from typing import Any

from distributed import WorkerPlugin

__all__ = ["PluginInstaller", "ensure_shared"]

_shared: dict[int, tuple[Any, ...]] = {}


class PluginInstaller(WorkerPlugin):
    """Loads ``specs`` and registers ``classes`` in the worker's process."""

    name = "bandit-dashboard-plugins"

    def __init__(self, specs: list[str], classes: list[type]) -> None:
        self.specs = list(specs)
        self.classes = list(classes)

    def setup(self, worker: Any) -> None:
        from .. import plugins

        for spec in self.specs:
            plugins.load_plugin(spec)
        for cls in self.classes:
            plugins.register(cls, replace=True)


def ensure_shared(client: Any) -> None:
    """Install this process's plug-ins on ``client``'s workers if they changed since the last
    call for that client (cheap when nothing changed)."""
    from .. import plugins

    specs = list(plugins.LOADED_SPECS)
    classes = [
        c
        for c in plugins.registered_plugin_classes()
        if not c.__module__.startswith("bandit_dashboard_plugin_")  # those come from specs
    ]
    state = (tuple(specs), tuple(classes))
    if not specs and not classes:
        return
    if _shared.get(id(client)) == state:
        return
    client.register_plugin(PluginInstaller(specs, classes))
    _shared[id(client)] = state
