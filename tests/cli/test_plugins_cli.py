"""``--plugin`` and the ``algorithms`` command from the command line (fresh processes, so the
registrations of one case never leak into another)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"


def cli(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "dashboard", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


RANDOM = [
    "simulate",
    "--plugin",
    "docs/examples/random_mset.py",
    "--problem",
    "cmab",
    "--algorithm",
    "Random-m-set",
    "--d",
    "8",
    "--m",
    "2",
    "--horizon",
    "1000",
    "--runs",
    "2",
    "--seed",
    "7",
    "--format",
    "json",
]


def _numbers(out: str) -> list:
    doc = json.loads(out)
    return [{k: v for k, v in r.items() if "wall" not in k} for r in doc["results"]]


def test_the_example_plugin_runs_from_the_cli_with_stable_numbers():
    first, second = cli(*RANDOM), cli(*RANDOM)
    assert first.returncode == 0, first.stderr
    assert _numbers(first.stdout) == _numbers(second.stdout)
    (res,) = json.loads(first.stdout)["results"]
    assert res["algorithm"] == "Random-m-set" and res["oracle_queries_mean"] == 1000
    # learns nothing: far more regret than CUCB on the same instance
    cucb = cli(*[a if a != "Random-m-set" else "CUCB" for a in RANDOM])
    assert res["final_regret_mean"] > 3 * json.loads(cucb.stdout)["results"][0]["final_regret_mean"]
    # a declared constant through --param, checked by its declaration
    blocks = cli(*RANDOM, "--param", "Random-m-set:block=100")
    assert json.loads(blocks.stdout)["results"][0]["oracle_queries_mean"] == 10
    bad = cli(*RANDOM, "--param", "Random-m-set:block=0")
    assert bad.returncode == 2
    assert bad.stderr.strip() == ("error: Random-m-set: block must be in [1, 10000000] (got 0)")


def test_the_plugin_numbers_do_not_depend_on_chunking():
    """Counter-based randomness: the example gives the same curve streamed in chunks."""
    code = (
        "import numpy as np\n"
        "from dashboard.plugins import load_plugin\n"
        "from dashboard.simulation.runner import Simulation\n"
        "from dashboard.simulation.specs import make_spec\n"
        "load_plugin('docs/examples/epsilon_greedy.py')\n"
        "spec = make_spec('cmab', d=6, m=2)\n"
        "a = Simulation(spec, ['eps-greedy'], 600, runs=2, seed=3)\n"
        "a.advance_to(600)\n"
        "b = Simulation(spec, ['eps-greedy'], 600, runs=2, seed=3)\n"
        "for t in (1, 7, 50, 333, 600): b.advance_to(t)\n"
        "ra, rb = a.result().results[0], b.result().results[0]\n"
        "assert np.array_equal(ra.regret, rb.regret), (ra.regret[:, -1], rb.regret[:, -1])\n"
        "print(ra.final_regret.tolist())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert run.returncode == 0, run.stderr


def test_every_example_loads_and_lists():
    argv = ["algorithms", "--format", "json"]
    for path in sorted(EXAMPLES.glob("*.py")):
        argv += ["--plugin", str(path)]
    run = cli(*argv)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    names = [a["name"] for a in doc["algorithms"]]
    assert {"Random-m-set", "eps-greedy", "SP-uniform", "CUCB", "SBE"} <= set(names)
    assert "square" in [s["name"] for s in doc["shifts"]]
    assert set(doc) == {"algorithms", "shifts", "actions", "rewards"}
    for a in doc["algorithms"]:
        assert {"name", "problem", "rewards", "reference", "per_round", "constants"} <= set(a)
        for c in a["constants"]:
            assert {"name", "default", "bounds", "doc"} <= set(c)
            assert ("choices" in c) or ("low" in c and "high" in c) or c["kind"] == "bool"


def test_the_table_format_and_the_problem_filter():
    run = cli("algorithms", "--problem", "cmab")
    assert run.returncode == 0
    assert "AROQ-CMAB  [cmab, rare-query]  Algorithm 1" in run.stdout
    assert "SBE" not in run.stdout and "Action families" in run.stdout
    assert "    C = 1.5  [0.001, 1000]" in run.stdout
    bad = cli("algorithms", "--problem", "nope")
    assert bad.returncode == 2 and bad.stderr.startswith("error: unknown problem 'nope'")


BAD_PLUGINS = {
    "missing_method.py": (
        "from dashboard.plugins import AlgorithmDeclaration, Policy\n"
        "class P(Policy):\n"
        "    declaration = AlgorithmDeclaration('P', 'semiparametric', 'x')\n"
        "    def reset(self, env, horizon):\n"
        "        pass\n",
        "P does not implement advance",
    ),
    "wrong_constants.py": (
        "from dashboard.plugins import AlgorithmDeclaration, Constant, Policy\n"
        "class P(Policy):\n"
        "    declaration = AlgorithmDeclaration('P', 'semiparametric', 'x',\n"
        "        constants=(Constant('eta', 0.5),))\n"
        "    def __init__(self, rate=0.5):\n"
        "        super().__init__()\n"
        "    def reset(self, env, horizon): pass\n"
        "    def advance(self, until): return until\n",
        "P declares constant 'eta' that __init__ does not accept",
    ),
    "bad_bounds.py": (
        "from dashboard.plugins import AlgorithmDeclaration, Constant, Policy\n"
        "class P(Policy):\n"
        "    declaration = AlgorithmDeclaration('P', 'semiparametric', 'x',\n"
        "        constants=(Constant('eta', 5.0, high=1.0),))\n",
        "bad declaration of constant 'eta': its default fails its own bounds",
    ),
    "import_error.py": (
        "import no_such_module_anywhere\n",
        "ModuleNotFoundError: No module named 'no_such_module_anywhere'",
    ),
    "syntax_error.py": ("def broken(:\n    pass\n", "syntax error at line 1"),
    "raises.py": ("raise RuntimeError('boom\\nsecond line')\n", "RuntimeError: boom"),
    "exits.py": ("import sys\nsys.exit(3)\n", "SystemExit: 3"),
    "clash.py": (
        "from dashboard.plugins import AlgorithmDeclaration, Policy\n"
        "class P(Policy):\n"
        "    declaration = AlgorithmDeclaration('sbe', 'semiparametric', 'x')\n"
        "    def reset(self, env, horizon): pass\n"
        "    def advance(self, until): return until\n",
        "an algorithm named 'SBE' is already registered",
    ),
    "undeclared.py": (
        "from dashboard.plugins import Policy\n"
        "class P(Policy):\n"
        "    def reset(self, env, horizon): pass\n"
        "    def advance(self, until): return until\n",
        "P has no declaration of its own",
    ),
    "empty.py": ("x = 1\n", "defines no declared algorithm"),
}


@pytest.mark.parametrize("name", sorted(BAD_PLUGINS))
def test_a_bad_plugin_is_one_error_line_and_exit_2(tmp_path, name):
    source, message = BAD_PLUGINS[name]
    path = tmp_path / name
    path.write_text(source)
    run = cli(
        "simulate",
        "--plugin",
        str(path),
        "--problem",
        "semiparametric",
        "--algorithm",
        "SBE",
        "--horizon",
        "100",
    )
    assert run.returncode == 2
    assert run.stdout == "" and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("error: ") and message in run.stderr, run.stderr


def test_missing_plugin_file_and_module():
    run = cli("algorithms", "--plugin", "no/such/file.py")
    assert (
        run.returncode == 2
        and run.stderr == "error: cannot load plug-in 'no/such/file.py': no such file\n"
    )
    run = cli("algorithms", "--plugin", "no_such_package.policies")
    assert run.returncode == 2 and "ModuleNotFoundError" in run.stderr
    assert run.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ('SROQ-CMAB:executor="x"', "executor is not a constant of SROQ-CMAB"),
        ("CUCB:oracle_delay=1e9", "oracle_delay is not a constant of CUCB"),
        ("CUCB:__class__=1", "CUCB has no constant '__class__'; allowed: C"),
        ("CUCB:nope=1", "CUCB has no constant 'nope'; allowed: C"),
        ("CUCB:c=1", "CUCB has no constant 'c'; allowed: C"),
        ("CUCB:C=1e-300", "C must be in [0.001, 1000]"),
    ],
)
def test_param_errors_name_the_allowed_constants(param, message):
    alg = param.split(":")[0]
    run = cli(
        "simulate", "--problem", "cmab", "--algorithm", alg, "--horizon", "50", "--param", param
    )
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert run.stderr.startswith("error: ") and message in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("SBE:C=1", "SBE has no constant 'C'; allowed: c, delta, n_rule"),
        ("LinUCB:lam=1e-300", "LinUCB: lam must be in [1e-06, 1000000] (got 1e-300)"),
        ("SBE:c=1e-300", "SBE: c must be in [0.001, 1000] (got 1e-300)"),
    ],
)
def test_semiparametric_param_errors(param, message):
    alg = param.split(":")[0]
    run = cli(
        "simulate",
        "--problem",
        "semiparametric",
        "--algorithm",
        alg,
        "--horizon",
        "50",
        "--param",
        param,
    )
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert message in run.stderr, run.stderr


def test_param_help_lists_the_declared_constants():
    run = cli("simulate", "--help")
    text = " ".join(run.stdout.split())
    assert "SROQ-CMAB: C, M, grid" in text and "python -m dashboard algorithms" in text


def test_serve_takes_plugins_and_refuses_a_bad_one_before_serving(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def broken(:\n")
    run = cli("serve", "--plugin", str(bad), "--in-process", "--port", "5999")
    assert run.returncode == 2 and run.stderr.count("\n") == 1
    assert "syntax error at line 1" in run.stderr
    assert "--plugin PATH_OR_MODULE" in cli("serve", "--help").stdout
