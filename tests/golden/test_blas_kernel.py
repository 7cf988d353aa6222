"""The golden numbers need numpy's OpenBLAS on the kernels they were recorded with
(``tests/conftest.py`` pins them on x86-64 with AVX2; see ``_pin_openblas_kernel``)."""

from __future__ import annotations

import ctypes
import glob
import os

import numpy as np
import pytest

from tests.conftest import OPENBLAS_CORETYPE


def _openblas_corename() -> str | None:
    """The kernel family numpy's bundled OpenBLAS runs, or None for another BLAS."""
    libs = os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs")
    for path in glob.glob(os.path.join(libs, "libscipy_openblas*.so")):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename"):
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return None


def test_numpy_runs_the_pinned_openblas_kernel():
    if OPENBLAS_CORETYPE is None:
        pytest.skip("not an x86-64 CPU with AVX2: OpenBLAS's kernel is not pinned")
    assert os.environ["OPENBLAS_CORETYPE"] == OPENBLAS_CORETYPE
    name = _openblas_corename()
    if name is None:
        pytest.skip("numpy does not bundle scipy-openblas here")
    assert name.lower() == OPENBLAS_CORETYPE.lower(), (
        f"numpy's OpenBLAS runs its {name} kernels, not {OPENBLAS_CORETYPE}: it was loaded "
        "before tests/conftest.py set OPENBLAS_CORETYPE"
    )
