"""Shared fixture of the notebook tests: a ``python3`` kernel running this interpreter."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def kernel_name(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A ``python3`` kernel running this interpreter (installed in a temp dir if missing)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec("python3")
        argv0 = spec.argv[0]
        usable = (
            argv0 in ("python", "python3")
            or Path(argv0).resolve() == Path(sys.executable).resolve()
        )
    except NoSuchKernel:
        usable = False
    if not usable:
        from ipykernel.kernelspec import install

        prefix = tmp_path_factory.mktemp("jupyter")
        install(kernel_name="python3", prefix=str(prefix))
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            [str(prefix / "share" / "jupyter"), os.environ.get("JUPYTER_PATH", "")]
        )
    return "python3"
