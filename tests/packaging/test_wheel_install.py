"""The wheel as a student gets it: installed into a fresh virtual environment outside the
checkout, run as ``bandit-dashboard`` from a folder far from it.

The new environment has the wheel and nothing of the checkout; its dependencies (numpy, panel,
...) are reached through a ``.pth`` line naming the test environment's site-packages, so the
test needs no network.  (A ``.pth`` line adds a folder to ``sys.path`` without running that
folder's own ``.pth`` files, so the checkout's editable install stays out.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory, wheel) -> dict[str, Path]:
    """``{"bin": the venv's bin/, "cwd": a folder outside the checkout}``."""
    base = tmp_path_factory.mktemp("student")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", wheel],
        check=True,
        timeout=300,
    )
    site = Path(
        subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    cwd = base / "home"
    cwd.mkdir()
    return {"bin": venv / "bin", "cwd": cwd, "site": site}


def _run(installed, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DASHBOARD_LESSONS_DIR")}
    env["PATH"] = f"{installed['bin']}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [str(installed["bin"] / "bandit-dashboard"), *args],
        cwd=installed["cwd"],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_wheel_carries_notebooks_examples_docs_lessons_and_license(wheel) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, pattern in (
        ("notebooks", "[0-9][0-9]-*.ipynb"),
        ("docs", "*.md"),
        ("docs/examples", "*.py"),
        ("lessons", "[0-9][0-9]-*.md"),
    ):
        expected = {f"dashboard/{folder}/{p.name}" for p in (ROOT / folder).glob(pattern)}
        assert expected and expected <= names, folder
    assert any(re.search(r"\.dist-info/(licenses/)?LICENSE$", n) for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Classifier: Intended Audience :: Education" in text
    assert "License-Expression: MIT" in text


def test_version_and_usage_name_the_command(installed) -> None:
    out = _run(installed, "--version")
    assert out.returncode == 0 and re.fullmatch(r"bandit-dashboard \d+\.\d+\.\d+\S*\n", out.stdout)
    out = _run(installed)
    assert out.returncode == 2 and out.stderr.startswith("error: usage: bandit-dashboard ")


def test_the_readme_simulate_example_runs_from_the_installed_wheel(installed) -> None:
    readme = (ROOT / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("bandit-dashboard simulate"))
    args = line.split()[1:]
    out = _run(installed, *args, "--format", "json")
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(out.stdout)
    assert data["results"][0]["algorithm"] == "CUCB" and data["horizon"] == 1000
    # the installed module, not the checkout's
    probe = subprocess.run(
        [str(installed["bin"] / "python"), "-c", "import dashboard; print(dashboard.__file__)"],
        cwd=installed["cwd"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip().startswith(str(installed["site"]))


def test_notebooks_copies_into_a_folder_and_refuses_to_overwrite(installed) -> None:
    target = installed["cwd"] / "my-notebooks"
    out = _run(installed, "notebooks", str(target))
    assert out.returncode == 0, out.stderr
    expected = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    assert sorted(p.name for p in target.glob("*.ipynb")) == expected
    assert sorted(p.name for p in (target / "examples").glob("*.py"))
    first = target / expected[0]
    first.write_text("my edits")
    again = _run(installed, "notebooks", str(target))
    assert again.returncode == 2 and again.stderr.startswith("error: ")
    assert "--force" in again.stderr and again.stderr.count("\n") == 1
    assert first.read_text() == "my edits"  # nothing overwritten
    forced = _run(installed, "notebooks", str(target), "--force")
    assert forced.returncode == 0 and json.loads(first.read_text())["cells"]


def _named_paths(text: str) -> set[str]:
    """Paths a help text names: inside the package (``docs/LIMITS.md``) or from its top
    (``dashboard/simulation/specs.py``)."""
    return set(
        re.findall(r"\b(?:dashboard|docs|lessons|notebooks)/[\w./-]+\.(?:md|py|ipynb)\b", text)
    )


def test_every_path_the_help_names_exists_in_the_installed_package(installed) -> None:
    top = _run(installed, "--help")
    assert top.returncode == 0
    listing = top.stdout.split("COMMAND\n", 1)[1].split("\noptions:")[0]
    commands = re.findall(r"^    ([a-z-]+)\b", listing, flags=re.M)
    assert {"simulate", "serve", "notebooks", "docs"} <= set(commands)
    texts = {"--help": top.stdout}
    for command in commands:
        out = _run(installed, command, "--help")
        assert out.returncode == 0, (command, out.stderr)
        assert f"usage: bandit-dashboard {command}" in out.stdout.replace("\n", " ")
        assert "python -m dashboard" not in out.stdout  # the command the user typed
        texts[command] = out.stdout
    package = installed["site"] / "dashboard"
    named = 0
    for where, text in texts.items():
        for path in _named_paths(text.replace("\n", " ")):
            found = installed["site"] / path if path.startswith("dashboard/") else package / path
            assert found.exists(), f"{where} names {path}, not installed"
            named += 1
    assert named >= 1  # (the check found the paths it is about)
    for name in ("LIMITS", "PLUGINS", "DIFFERENCES"):
        doc = _run(installed, "docs", name)
        assert doc.returncode == 0 and doc.stdout.startswith("#"), name
