r"""Build the classroom notebooks (nbformat v4, no outputs) from the cell lists below.

Run ``python notebooks/build_notebooks.py`` after editing; the ``.ipynb`` files are generated,
so edit here, not in Jupyter.  Every notebook starts with the extensions, then a parameter cell
``SCALE = os.environ.get("NOTEBOOK_SCALE", "classroom")`` (``"paper"`` for full size).
The setup cell calls :func:`dashboard.ui.notebook.extension`: Panel, HoloViews and MathJax
with every script and stylesheet inline (a classroom may be offline), and the whole bundle sent
again when the cell is re-run after a browser reload.
Exercise solutions are code cells tagged ``solution`` with ``source_hidden`` set, under a
"Solution" header, so JupyterLab shows them collapsed.

Maths in markdown cells is LaTeX, typeset by Jupyter's own MathJax: inline ``$...$`` and display
``$$...$$``, in the notation of ``lessons/*.md``; code spans are for code only (names, parameters,
commands).  Markdown with LaTeX is written as raw (``r``-prefixed) strings so that the notebook
gets single backslashes.  It avoids ``\u``, ``\x`` and ``\N`` (``panel serve`` pastes markdown
cells into a Python string without escaping backslashes; those three would be syntax errors).
The last code cell of every notebook is ``.servable()``: ``panel serve notebooks/NN-....ipynb``
runs the notebook and serves that cell as an app, while in Jupyter it displays as usual.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SETUP = """\
import os

import holoviews as hv
import numpy as np
import panel as pn

from dashboard.ui.notebook import extension

# hv.extension("bokeh") and pn.extension("mathjax") with every script and stylesheet sent
# from this kernel (no network needed); re-run this cell after reloading the browser tab.
extension()"""

PARAMS = """\
# Parameters: "classroom" keeps every run to seconds; "paper" uses the papers' sizes.
SCALE = os.environ.get("NOTEBOOK_SCALE", "classroom")
BIG = SCALE == "paper\""""


def md(text: str) -> nbformat.NotebookNode:
    """A markdown cell."""
    return new_markdown_cell(text.strip("\n"))


def code(text: str) -> nbformat.NotebookNode:
    """A code cell."""
    return new_code_cell(text.strip("\n"))


def exercise(question: str, solution: str) -> list[nbformat.NotebookNode]:
    """An exercise: the question, a "Solution" header and a hidden, tagged solution cell."""
    sol = new_code_cell(solution.strip("\n"))
    sol.metadata = {"jupyter": {"source_hidden": True}, "tags": ["solution"]}
    return [md(f"### Exercise\n\n{question.strip()}"), md("#### Solution"), sol]


def as_app(name: str) -> nbformat.NotebookNode:
    """The markdown cell above a notebook's last, ``.servable()`` cell."""
    return md(
        f"""
## This notebook as an app

The cell below is `.servable()`: an instructor can serve it as a web app with
`panel serve notebooks/{name}` (which runs the whole notebook first). In Jupyter,
`.servable()` changes nothing: the cell shows its output as usual.
"""
    )


def notebook(title: str, intro: str, cells: list) -> nbformat.NotebookNode:
    """A notebook: title, intro, setup and parameter cells, then ``cells``."""
    nb = new_notebook()
    nb.metadata = {
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    }
    body: list = [md(f"# {title}\n\n{intro.strip()}"), code(SETUP), code(PARAMS)]
    for c in cells:
        body.extend(c if isinstance(c, list) else [c])
    for i, cell in enumerate(body):
        cell.id = f"c{i:02d}"  # stable ids: rebuilding gives identical files
    nb.cells = body
    return nb


# ------------------------------------------------------------------------------------ 01
NB01 = notebook(
    "Oracle calls: CUCB and AROQ-CMAB (lessons 1-2)",
    r"""
Combinatorial semi-bandits (oracle-efficient paper, Sections 2-3). Each round picks an action
(a set of at most $m$ of $d$ base arms); finding the best action for given scores needs an
**oracle** (a combinatorial solver). CUCB calls it every round; AROQ-CMAB (Algorithm 1) calls it
only when an arm's epoch ends. We use the same public API as the dashboard: `make_spec`,
`simulate` and the plot builders of `dashboard.ui.plots`.
""",
    [
        code(
            """
from dashboard.simulation.specs import make_spec
from dashboard.simulation.runner import simulate
from dashboard.ui import plots
from dashboard.ui.lessons import load_lesson

lesson = load_lesson(1)
print(lesson.title)
lesson.preset
"""
        ),
        md(
            """
## The paper's Figure 2 setting, small

Linear rewards, $d = 20$, $m = 3$, means drawn from $U[0, 1]$. The lesson's preset runs it at a
classroom horizon.
"""
        ),
        code(
            """
T = 100_000 if BIG else 10_000
spec = make_spec("cmab", d=20, m=3, reward="linear")
result = simulate(spec, ["CUCB", "AROQ-CMAB"], horizon=T, runs=2, seed=1)
print(result.to_table())
"""
        ),
        code("plots.complexity_plot(result) + plots.regret_plot(result)"),
        md(
            r"""
## When does AROQ-CMAB call the oracle?

Each tick is an oracle call (run 1). CUCB's calls fill the row (one per round); AROQ-CMAB's
calls thin out as its epochs lengthen towards $Tm/d$. Algorithm 1 starts a new epoch for arm $i$
when its number of plays $|\mathcal{T}_i(\tau)|$ in the current epoch $\tau$ satisfies

$$
|\mathcal{T}_i(\tau)| \;\ge\; 1 + \sqrt{\frac{Tm\,|\mathcal{T}_i(\tau - 1)|}{d}} ;
$$

the epoch lengths $x_\tau$ converge to $Tm/d$ and the shortfall $(Tm/d)/x_\tau$ is
square-rooted at every epoch (Lemma 2).
"""
        ),
        code("plots.oracle_timeline(result)"),
        code(
            """
aroq = result["AROQ-CMAB"]
calls = aroq.logs[0].arrays()["t"]
print("AROQ-CMAB oracle calls at rounds:", calls[:12], "...")
print("gaps between calls:", np.diff(calls)[:12], "...")
"""
        ),
        *exercise(
            r"""
Double the horizon (and double it again). How does the number of AROQ-CMAB oracle queries
grow, compared with CUCB's $T$? Predict first: linearly, like $\sqrt{T}$, or like $\log T$?
""",
            """
for T_ex in (2_000, 4_000, 8_000, 16_000):
    r = simulate(spec, ["CUCB", "AROQ-CMAB"], horizon=T_ex, runs=1, seed=1)
    print(T_ex, {a.algorithm: int(a.queries[0, -1]) for a in r.results})
# CUCB: exactly T. AROQ-CMAB: almost flat (about 2 calls per arm here; Theorem 1 allows
# O(d log log T)), so the ratio queries / T collapses as T grows.
""",
        ),
        *exercise(
            r"""
The confidence constant $C$ of Eq. (1) (parameter `C`, default $1.5$) sets the exploration width
$\sqrt{C \log t / n_{t,i}}$ of arm $i$. Run AROQ-CMAB with $C = 0.5$ and $C = 4$: what happens
to the regret and to the number of oracle calls?
""",
            """
for C in (0.5, 1.5, 4.0):
    r = simulate(spec, ["AROQ-CMAB"], horizon=5_000, runs=2, seed=1,
                 params={"AROQ-CMAB": {"C": C}})
    s = r.results[0].summary()
    print(f"C={C}: regret {s['final_regret_mean']:.0f}, queries {s['oracle_queries_mean']:.0f}")
# Wider confidence (larger C) explores more (regret up on easy instances); the number of
# oracle calls is set by the epoch schedule, not by C, so it barely moves.
""",
        ),
        md(
            """
## The same thing, live

The dashboard component works inside the notebook: load lesson 2's preset and press **Run**.
`panel serve notebooks/01-oracle-calls.ipynb` runs the notebook and serves this cell's dashboard
as a web app (in Jupyter, `.servable()` changes nothing).
"""
        ),
        code(
            """
from dashboard.ui.app import DashboardApp

app = DashboardApp()
app.config.apply_preset(load_lesson(2).preset)
app.servable(title="Oracle calls: CUCB and AROQ-CMAB")
"""
        ),
    ],
)

# ------------------------------------------------------------------------------------ 02
NB02 = notebook(
    "Scheduled queries, parallelism and beyond the worst case (lessons 3-4)",
    r"""
SROQ-CMAB (Algorithm 2) fixes a time grid in advance: at the start of each of $M$ epochs it
eliminates arms and asks the oracle one question per surviving arm, all **in parallel** (one
adaptive round per epoch, Appendix A.1). The epochs end at $t_1 \lt t_2 \lt \dots \lt t_M = T$
(rounded to integers), with

$$
t_1 = \eta, \qquad t_\tau = \eta\sqrt{t_{\tau-1}} = \eta^{\,2 - 2^{1-\tau}}, \qquad
\eta = T^{1/(2 - 2^{1-M})}, \qquad M = \max\big(2, \lceil \log_2\log_2 T \rceil\big).
$$

Then we look at the covariance-adaptive and general-reward variants (Appendix A.11) and the
approximate oracle (Algorithm 5).
""",
    [
        code(
            """
from dashboard.algorithms.cmab.policies.sroq import default_num_epochs, sroq_time_grid
from dashboard.simulation.specs import make_spec
from dashboard.simulation.runner import simulate
from dashboard.ui import plots

T = 100_000 if BIG else 20_000
M = default_num_epochs(T)
print(f"T = {T:,}: M = {M} epochs ending at", sroq_time_grid(T, M))
"""
        ),
        code(
            """
spec = make_spec("cmab", d=20, m=3, reward="linear")
result = simulate(spec, ["AROQ-CMAB", "SROQ-CMAB"], horizon=T, runs=2, seed=0)
print(result.to_table())
plots.complexity_plot(result) + plots.surviving_plot(result)
"""
        ),
        md(
            """
## Parallel oracle calls

With an expensive oracle (`oracle_delay` seconds per call) and a thread pool, SROQ's batch of
queries in an epoch costs about one call's time: its wall time follows its *adaptivity*, not its
query count.
"""
        ),
        code(
            """
slow = make_spec("cmab", d=20, m=3, reward="linear", oracle_delay=0.002,
                 executor="threads", workers=8)
timed = simulate(slow, ["AROQ-CMAB", "SROQ-CMAB"], horizon=5_000, runs=1, seed=0)
print(timed.to_table())
plots.wall_time_plot(timed)
"""
        ),
        md("## Beyond the worst case: covariance and general rewards"),
        code(
            """
T_small = 20_000 if BIG else 1_500
cov = simulate(make_spec("cmab", d=10, m=3, reward="covariance"),
               ["AROQ-C-CMAB", "SROQ-C-CMAB"], horizon=T_small, runs=1, seed=0)
gen = simulate(make_spec("cmab", d=5, m=2, reward="general"),
               ["AROQ-GR-CMAB", "SROQ-GR-CMAB"], horizon=T_small, runs=1, seed=0)
print(cov.to_table()); print(gen.to_table())
plots.regret_plot(cov) + plots.regret_plot(gen)
"""
        ),
        *exercise(
            r"""
How many adaptive rounds does SROQ-CMAB use for $T = 10^3, 10^4, 10^5, 10^6$? Compute it from
the grid alone (no simulation) and compare with $\log_2\log_2 T$.
""",
            """
import math
for T_ex in (10**3, 10**4, 10**5, 10**6):
    M_ex = default_num_epochs(T_ex)
    print(T_ex, M_ex, round(math.log2(math.log2(T_ex)), 2))
# One parallel round per epoch: the adaptivity is M = ceil(log2 log2 T) (at least 2), i.e.
# 4 or 5 for any realistic horizon.
""",
        ),
        *exercise(
            r"""
Run `alpha-AROQ-CMAB` (greedy approximate oracle) next to AROQ-CMAB on `matchings` with
$d = 12$, $m = 3$. Is its regret close? Why can it be, even though the oracle is only
$1/2$-approximate in the worst case?
""",
            """
match = make_spec("cmab", d=12, m=3, actions="matchings", reward="linear")
r = simulate(match, ["AROQ-CMAB", "alpha-AROQ-CMAB"], horizon=3_000, runs=2, seed=0)
print(r.to_table())
# Greedy is often exact on random instances; the guarantee (alpha-regret) only bounds the worst
# case, where greedy takes an edge that blocks two better ones.
""",
        ),
        as_app("02-scheduled-queries.ipynb"),
        code(
            """
pn.Column(
    "## SROQ-CMAB: scheduled, parallel oracle calls",
    plots.complexity_plot(result) + plots.surviving_plot(result),
    plots.wall_time_plot(timed),
    "## Beyond the worst case: covariance and general rewards",
    plots.regret_plot(cov) + plots.regret_plot(gen),
    sizing_mode="stretch_width",
).servable(title="Scheduled queries, parallelism and beyond the worst case")
"""
        ),
    ],
)

# ------------------------------------------------------------------------------------ 03
NB03 = notebook(
    "Semiparametric shifts and orthogonalized regression (lesson 5)",
    r"""
Semiparametric bandits (experimental-design paper, Section 2): the reward is

$$
r_t = x_{a_t}^\top\theta^{\star} + \nu_t + \eta_t ,
$$

where the shift $\nu_t$ is arbitrary (it may even depend on the past). Least squares is biased
by $\nu_t$; **orthogonalized regression** (Eq. 2) centres each feature by the policy's mean
feature, so the shift washes out.
""",
    [
        code(
            """
from dashboard.algorithms.semiparametric.environment import SemiparametricEnvironment
from dashboard.algorithms.semiparametric.estimators import LeastSquares, OrthogonalizedRidge
from dashboard.algorithms.semiparametric.instances import gap_instance
from dashboard.algorithms.semiparametric.shifts import make_shift
from dashboard.simulation.specs import make_spec
from dashboard.simulation.runner import simulate
from dashboard.ui import plots

inst = gap_instance(d=5, K=10, gap=0.5, seed=0)
t = np.arange(1, 61)
shifts = (plots.shift_plot(t, make_shift("sine").values(t)).opts(title="ν¹ = 1 + sin(2t)")
          + plots.shift_plot(t, make_shift("log").values(t)).opts(title="ν² (as printed)"))
shifts
"""
        ),
        md(
            r"""
## Least squares vs orthogonalized regression under a shift

Play arms uniformly at random for $n$ rounds, then estimate $\theta^{\star}$ both ways and
measure the error of every arm's gap to arm 0,

$$
\max_i \big| (x_i - x_0)^\top (\hat{\theta} - \theta^{\star}) \big| .
$$
"""
        ),
        code(
            """
n = 50_000 if BIG else 5_000
p = np.full(inst.K, 1 / inst.K)
env = SemiparametricEnvironment(inst, make_shift("sine"), noise_sigma=1.0, seed=0)
arms = np.random.default_rng(0).integers(0, inst.K, n)
rewards = env.play(arms, 1, p)
ols = LeastSquares(inst.X, ridge=1.0)
ols.add_block(arms, rewards)
orth = OrthogonalizedRidge(inst.X)
orth.add_block(arms, rewards, p)
B = inst.X - inst.X[0]
for name, th in [("least squares", ols.theta()), ("orthogonalized", orth.theta())]:
    print(f"{name:>15}: max gap error {np.abs(B @ (th - inst.theta)).max():.3f}")
"""
        ),
        md(
            """
## Regret: a linear bandit foil vs the semiparametric algorithms

Lesson 5's setting: an **adversarial** shift that reacts to the learner's action distribution.
LinUCB (ordinary least squares) keeps paying; SBE identifies the best arm and its regret
flattens.
"""
        ),
        code(
            """
T = 50_000 if BIG else 6_000
spec = make_spec("semiparametric", d=5, K=10, shift="adversarial", gap=0.5, noise=1.0)
result = simulate(spec, ["LinUCB", "BOSE", "SBE"], horizon=T, runs=2, seed=0)
print(result.to_table())
plots.regret_plot(result)
"""
        ),
        *exercise(
            r"""
Rerun the regret comparison with the paper's `sine` shift. LinUCB now does well: why is an
oblivious shift like $\nu_t = 1 + \sin(2t)$ harmless for it, while the adversarial one is not?
""",
            """
sine = make_spec("semiparametric", d=5, K=10, shift="sine", gap=0.5, noise=1.0)
print(simulate(sine, ["LinUCB", "SBE"], horizon=T, runs=2, seed=0).to_table())
# 1 + sin(2t) does not depend on the action, so comparing arms at the same round cancels it;
# for least squares it acts like extra (bounded, mean-one) noise plus an intercept that the
# arms' features partly absorb. The adversarial shift correlates with the chosen arm and
# biases the least-squares comparison of arms in a consistent direction.
""",
        ),
        *exercise(
            """
Repeat the estimator comparison with the `adversarial` shift and with no shift at all
(`"none"`). When does least squares do fine, and why?
""",
            """
for shift in ("none", "adversarial"):
    env_ex = SemiparametricEnvironment(inst, make_shift(shift), noise_sigma=1.0, seed=0)
    rw = env_ex.play(arms, 1, p)
    o = LeastSquares(inst.X, ridge=1.0); o.add_block(arms, rw)
    q = OrthogonalizedRidge(inst.X); q.add_block(arms, rw, p)
    print(shift, [round(float(np.abs(B @ (th - inst.theta)).max()), 3)
                  for th in (o.theta(), q.theta())])
# Without a shift both are consistent. A shift with non-zero mean (or one that tracks the
# action) biases least squares; the orthogonalized estimator multiplies nu_t by a centred
# feature whose conditional mean is zero, so its error still shrinks like 1/sqrt(n).
""",
        ),
        as_app("03-semiparametric-shifts.ipynb"),
        code(
            """
pn.Column(
    "## The paper's shifts",
    shifts,
    "## Regret under an adversarial shift: LinUCB, BOSE and SBE",
    plots.regret_plot(result),
    sizing_mode="stretch_width",
).servable(title="Semiparametric shifts and orthogonalized regression")
"""
        ),
    ],
)

# ------------------------------------------------------------------------------------ 04
NB04 = notebook(
    "Experimental design: G-optimal design and DEO (lesson 6)",
    r"""
The G-optimal design (Eq. 1) minimises the largest prediction variance over the designs
$\mathbf{p}$ in the simplex $\Delta^{(K)}$,

$$
\min_{\mathbf{p} \in \Delta^{(K)}} \max_{i \in [K]} \|x_i\|^2_{V(\mathbf{p})^{-1}},
\qquad V(\mathbf{p}) = \sum_{i} p_i x_i x_i^\top ;
$$

Kiefer-Wolfowitz says the optimum equals the dimension $d$. DEO (Algorithm 1) applies it to the
differences $b_i = x_i - x_1$ and puts half of the mass on the anchor $x_1$, which makes
orthogonalized regression work (Theorem 1).
""",
    [
        code(
            """
from dashboard.algorithms.semiparametric.design import deo_design, design_report, g_optimal_design
from dashboard.algorithms.semiparametric.instances import random_instance
from dashboard.ui.lessons import load_lesson

d, K = (10, 60) if BIG else (4, 12)
inst = random_instance(d, K, seed=0)
g = g_optimal_design(inst.X)
print(f"G-optimal: max leverage {g.max_leverage:.3f} vs d = {g.span_dimension} "
      f"(Kiefer-Wolfowitz), support {g.support.size} <= d(d+1)/2 = {d * (d + 1) // 2}")
"""
        ),
        code(
            """
deo = deo_design(inst.X, anchor=0)
print(f"DEO: ||x_i - x_1|| <= {deo.max_norm_to_anchor:.2f} (bound 2 sqrt(d) = "
      f"{deo.bound_2_sqrt_d:.2f}), ||x_i - xbar|| <= {deo.max_norm_to_mean:.2f} "
      f"(bound {deo.bound_4_sqrt_d:.2f})")
weights = hv.Bars((np.arange(K), deo.weights), "arm", "weight").opts(
    title="DEO weights (half on the anchor x_1 = arm 0)", responsive=True, height=300)
weights
"""
        ),
        md(
            r"""
How far is DEO from the best possible design? The paper calls Definition 2,

$$
\min_{\mu \in \mathbb{R}^d,\, \mathbf{p} \in \Delta^{(K)}} \; \max_{i \in [K]}
\|x_i - \mu\|_{\boldsymbol{\Sigma}_{\mathbf{p}}^{-1}}, \qquad
\boldsymbol{\Sigma}_{\mathbf{p}} = \sum_{i=1}^{K} p_i (x_i - \bar{x}_{\mathbf{p}})
(x_i - \bar{x}_{\mathbf{p}})^\top ,
$$

non-convex, but it is an ordinary G-optimal design in disguise: with lifted features
$z_i = (1, x_i)$,

$$
z_i^\top M(\mathbf{p})^{-1} z_i
= 1 + \|x_i - \bar{x}_{\mathbf{p}}\|^2_{\boldsymbol{\Sigma}_{\mathbf{p}}^{-1}},
$$

so the G-optimal design of the $z_i$ (max leverage $r + 1$) reaches the optimum $\sqrt{r}$ of
Definition 2 with $\mu = \bar{x}_{\mathbf{p}}$, and no design does better (the average of
$\|x_i - \mu\|^2_{\boldsymbol{\Sigma}_{\mathbf{p}}^{-1}}$ under $\mathbf{p}$ is already
$\ge r$). DEO is a closed-form factor-2 approximation of it (Theorem 1, with $\mu = x_1$).
"""
        ),
        code(
            """
lifted = g_optimal_design(np.hstack([np.ones((K, 1)), inst.X]), tol=1e-6)
exact = design_report(inst.X, lifted.weights, anchor=0)
r = deo.span_dimension
print(f"exact optimum of Definition 2: {exact.max_norm_to_mean:.3f} = sqrt(r) = {r ** 0.5:.3f}")
print(f"DEO with mu = xbar: {deo.max_norm_to_mean:.3f}; with mu = x_1: "
      f"{deo.max_norm_to_anchor:.3f} <= 2 sqrt(r) = {2 * r ** 0.5:.3f}")
"""
        ),
        md(
            r"""
Why not just use the G-optimal design of the $x_i$ themselves? Its mean feature
$\bar{x}_{\mathbf{p}}$ can sit anywhere, and orthogonalized regression only sees
$x_i - \bar{x}_{\mathbf{p}}$: some directions may have almost no variance. Compare the
Theorem 1 quantities of the plain G-optimal design and of the uniform design with DEO's.
"""
        ),
        code(
            """
for name, w in [("uniform", np.full(K, 1 / K)), ("G-optimal of x_i", g.weights),
                ("DEO", deo.weights)]:
    rep = design_report(inst.X, w, anchor=0)
    print(f"{name:>18}: max ||x_i - x_1||_(Sigma_p^-1) = {rep.max_norm_to_anchor:.2f}")
"""
        ),
        *exercise(
            r"""
Check Kiefer-Wolfowitz yourself: for the G-optimal weights `g.weights`, compute
$V(\mathbf{p}) = \sum_i p_i x_i x_i^\top$ and every leverage $x_i^\top V(\mathbf{p})^{-1} x_i$.
What is their maximum, and where is it attained?
""",
            """
V = (inst.X.T * g.weights) @ inst.X
lev = np.einsum("ij,jk,ik->i", inst.X, np.linalg.inv(V), inst.X)
print(lev.max().round(3), "= d up to the solver's tolerance")
print("attained on the support:", np.flatnonzero(lev > lev.max() - 1e-2), g.support)
# The maximum is d, attained exactly on the support of p (the equivalence theorem).
""",
        ),
        *exercise(
            r"""
Move the anchor: compute `deo_design(inst.X, anchor=a)` for every arm `a`. Does the
Theorem 1 bound $\max_i \|x_i - x_a\|_{\boldsymbol{\Sigma}_{\mathrm{deo}}^{-1}} \le 2\sqrt{d}$
hold for all of them?
""",
            """
norms = [deo_design(inst.X, anchor=a).max_norm_to_anchor for a in range(K)]
print(np.round(norms, 2), "bound", round(2 * np.sqrt(d), 2))
# Yes: Theorem 1 holds for any anchor (the proof never uses which arm is x_1).
""",
        ),
        code("load_lesson(6).preset"),
        as_app("04-experimental-design.ipynb"),
        code(
            """
from dashboard.ui.app import DashboardApp

lesson6 = DashboardApp()
lesson6.config.apply_preset(load_lesson(6).preset)
pn.Column(
    "## DEO's design weights",
    weights,
    "## Lesson 6 in the dashboard: press **Run**",
    lesson6,
    sizing_mode="stretch_width",
).servable(title="Experimental design: G-optimal design and DEO")
"""
        ),
    ],
)

# ------------------------------------------------------------------------------------ 05
NB05 = notebook(
    "SBE: elimination, PAC and best-arm identification (lesson 7)",
    r"""
SBE (Algorithm 2) runs phases $\ell = 1, 2, \dots$ with accuracy $\varepsilon_\ell = 2^{-\ell}$:
it samples $n_\ell$ rounds from the DEO design over the surviving arms $\mathcal{A}_\ell$,
estimates $\theta^{\star}$ by orthogonalized regression ($\hat{\theta}_{(\ell)}$), and eliminates
arms whose estimated gap exceeds $\varepsilon_\ell$:

$$
\mathcal{A}_{\ell+1} = \Big\{ x \in \mathcal{A}_\ell :
\max_{x' \in \mathcal{A}_\ell} x'^\top\hat{\theta}_{(\ell)} - x^\top\hat{\theta}_{(\ell)}
\le \varepsilon_\ell \Big\}.
$$

When one arm is left it is declared the best arm (BAI) and played until $T$.
""",
    [
        code(
            """
from dashboard.algorithms.semiparametric.policies.sbe import phase_length
from dashboard.simulation.specs import make_spec
from dashboard.simulation.runner import Simulation
from dashboard.ui import plots

T = 50_000 if BIG else 6_000
spec = make_spec("semiparametric", d=5, K=10, shift="log", gap=0.5, noise=1.0)
with Simulation(spec, ["SBE", "SP-TS"], horizon=T, runs=3, seed=0) as sim:
    result = sim.run()
    inst = sim.built[0]
print(result.to_table())
plots.regret_plot(result) + plots.surviving_plot(result)
"""
        ),
        code(
            """
print("phase lengths n_l (Eq. 4, c = 1):", [phase_length(l, 5, 10, 0.05) for l in range(1, 6)])
plots.design_weights_plot(result) + plots.pac_plot(result, inst.X, inst.theta)
"""
        ),
        *exercise(
            r"""
Appendix I tunes SBE's phase-length constant $c$ (parameter `c`) over $c \in \{1, 2, 4, 8\}$.
Run SBE with each $c$: how do the final regret and the declaration time move, and does it still
find the best arm?
""",
            """
from dashboard.simulation.runner import simulate
for c in (1, 2, 4, 8):
    r = simulate(spec, ["SBE"], horizon=T, runs=2, seed=0, params={"SBE": {"c": c}})
    s = r.results[0].summary()
    print(c, round(s["final_regret_mean"]), s.get("declaration_time_mean"),
          s.get("best_arm_identified_rate"))
# Longer phases (larger c) spend more rounds exploring before declaring (regret up, later
# declaration, sometimes none within T) but eliminate more safely; c = 1 is best here.
""",
        ),
        *exercise(
            r"""
Shrink the gap to $\Delta_{\star} = 0.2$. Predict: how much later does SBE declare? (Theorem 5:
the BAI sample complexity scales like $d \log K / \Delta_{\star}^2$.)
""",
            """
hard = make_spec("semiparametric", d=5, K=10, shift="log", gap=0.2, noise=1.0)
r = simulate(hard, ["SBE"], horizon=4 * T, runs=4, seed=0).results[0]
print("declared at", r.declaration_time, "arms", r.declared_arm, "best", r.best_arm)
# SBE can only declare at a phase end, and n_l does not depend on the gap (about 4x longer each
# phase), so the declaration time jumps from one phase end to the next: some runs still declare
# at the same phase as with gap 0.5, others one phase later. Theorem 5's d log K / Delta^2 is
# an upper bound on the scaling, not a prediction for each run.
""",
        ),
        as_app("05-sbe.ipynb"),
        code(
            """
pn.Column(
    "## SBE and SP-TS: regret and surviving arms",
    plots.regret_plot(result) + plots.surviving_plot(result),
    "## DEO designs and the PAC view",
    plots.design_weights_plot(result) + plots.pac_plot(result, inst.X, inst.theta),
    sizing_mode="stretch_width",
).servable(title="SBE: elimination, PAC and best-arm identification")
"""
        ),
    ],
)

# ------------------------------------------------------------------------------------ 10, 11
_REPRO = """
{var} = run_experiment({name!r}, scale=SCALE, seed=0)
print(f"T = {{{var}.horizon:,}}, {{{var}.runs}} run(s), {{{var}.seconds:.1f}} s")
print("What the paper shows:", {var}.paper_shows)
print()
print("What we get:", {var}.we_get)
figure_layout({var})
"""

NB10 = notebook(
    "Reproducing the combinatorial paper's Figures 2-4",
    """
Section 6 (Figure 2: linear rewards, $d = 20$, $m = 3$) and Appendix A.11 (Figure 3: covariance,
$d = 10$, $m = 3$; Figure 4: general rewards, $d = 5$, $m = 2$). Each figure has (a, b)
cumulative adaptivity and query complexity over $t$, (c) regret, (d) runtime and (e, f) overall
complexities. The same runs are available from the command line:
`python -m dashboard reproduce cmab-fig2 --out figures/`.
""",
    [
        code(
            """
from dashboard.reproduce import figure_layout
from dashboard.simulation.experiments import FIGURES, run_experiment

for name in ("cmab-fig2", "cmab-fig3", "cmab-fig4"):
    sc = FIGURES[name].scale(SCALE)
    print(f"{name}: {FIGURES[name].title} -- T = {sc.horizon:,}, R = {sc.runs}")
"""
        ),
        md("## Figure 2: linear rewards, $d = 20$, $m = 3$"),
        code(_REPRO.format(name="cmab-fig2", var="fig2")),
        md("## Figure 3: covariance-adaptive, $d = 10$, $m = 3$"),
        code(_REPRO.format(name="cmab-fig3", var="fig3")),
        md("## Figure 4: general rewards, $d = 5$, $m = 2$"),
        code(_REPRO.format(name="cmab-fig4", var="fig4")),
        md(
            r"""
## Reading the comparison

* Query and adaptivity complexity: the per-round baselines make exactly $T$ calls; AROQ's
  grow like $d \log\log T$ and SROQ's adaptivity is the number of epochs.
* Regret: the paper reports AROQ slightly and SROQ somewhat above the baseline. At classroom
  horizons the gap is larger because SROQ's first epochs are long relative to $T$.
* Runtime: here oracle calls are exact and cheap, so wall time is mostly simulation; give the
  oracle a cost (`oracle_delay`) to see the paper's runtime ordering.
"""
        ),
        *exercise(
            """
Give the Figure 2 setting an expensive oracle (`oracle_delay=0.002` seconds per call, thread
executor) at $T = 3000$ and compare wall times. Which algorithm is fastest now, and why?
""",
            """
from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec
spec = make_spec("cmab", d=20, m=3, reward="linear", oracle_delay=0.002, executor="threads")
r = simulate(spec, ["CUCB", "AROQ-CMAB", "SROQ-CMAB"], horizon=3_000, runs=1, seed=0)
print(r.to_table())
# CUCB pays T delays; AROQ pays one per query; SROQ's queries of an epoch run in parallel, so
# it pays about one delay per epoch (its adaptivity): the paper's Figure 2(d) ordering.
""",
        ),
        as_app("10-reproduce-combinatorial.ipynb"),
        code(
            """
pn.Tabs(
    ("Figure 2", figure_layout(fig2)),
    ("Figure 3", figure_layout(fig3)),
    ("Figure 4", figure_layout(fig4)),
    sizing_mode="stretch_width",
).servable(title="Reproducing the combinatorial paper's Figures 2-4")
"""
        ),
    ],
)

NB11 = notebook(
    "Reproducing the semiparametric paper's Appendix I",
    r"""
Appendix I.1: cumulative regret of SBE, BOSE and semiparametric TS for $d = 5$, $K = 10$ and
$d = 20$, $K = 30$ (gap $1/2$, $\sigma = 1$) under the two shifts (as printed)

$$
\nu_t^{1} = 1 + \sin(2t), \qquad
\nu_t^{2} = \max\left( \frac{\log(t+1)}{5},\, 2 \right)\cdot(-1)^{t \bmod 3} .
$$

Appendix I.2: pure exploration with DEO, $\sqrt{t}\,\mathbf{e}_t$ with
$\mathbf{e}_t = \max_i |(x_i - x_1)^\top(\hat{\theta}_t - \theta^{\star})|$, against
$10\sqrt{d \log K}$ (10 repetitions, $K = 30$, $d = 5$ and $30$).
""",
    [
        code(
            """
from dashboard.reproduce import figure_layout
from dashboard.simulation.experiments import run_experiment
"""
        ),
        md("## I.1: cumulative regret under the two shifts"),
        code(_REPRO.format(name="semi-regret", var="regret")),
        md("## I.2: the PAC property of DEO"),
        code(_REPRO.format(name="semi-pac", var="pac")),
        *exercise(
            r"""
The paper tunes each algorithm's exploration constant over $c \in \{1, 2, 4, 8\}$ and keeps the
best. Rerun the $d = 5$, $K = 10$ sine panel with SP-TS at $c = 0.5, 1, 2$ (hint:
`run_experiment` takes `params={"SP-TS": {"c": ...}}`). Does the ranking change?
""",
            """
for c in (0.5, 1, 2):
    r = run_experiment("semi-regret", scale="test", params={"SP-TS": {"c": c}})
    sim = r.panels["d=5,K=10,sine"]
    print(c, {a.algorithm: round(float(a.final_regret.mean())) for a in sim.results})
# SP-TS is sensitive to c: on this easy instance a smaller c (less exploration) lowers its
# regret a lot. The paper keeps each baseline's best c, so compare rankings only after tuning.
# SBE and BOSE do not depend on the TS constant.
""",
        ),
        as_app("11-reproduce-semiparametric.ipynb"),
        code(
            """
pn.Tabs(
    ("I.1: regret under the two shifts", figure_layout(regret)),
    ("I.2: the PAC property of DEO", figure_layout(pac)),
    sizing_mode="stretch_width",
).servable(title="Reproducing the semiparametric paper's Appendix I")
"""
        ),
    ],
)

# ------------------------------------------------------------------------------------ 06
_GREEDY = """
import numpy as np

from dashboard.plugins import AlgorithmDeclaration, Constant, Policy, register_algorithm


class Greedy(Policy):
    \"\"\"Play the action with the best empirical means (unplayed arms count as `optimism`).\"\"\"

    # 1. the declaration: name, problem, paper reference and user constants, as data
    declaration = AlgorithmDeclaration(
        name="my-greedy",
        problem="cmab",
        reference="greedy (no exploration); a foil for Algorithm 1",
        rewards=("linear",),  # reward models this policy supports
        per_round=True,  # it asks the oracle every round
        doc="argmax of the empirical means",
        constants=(
            Constant("optimism", 1.0, low=0.0, high=10.0, doc="score of a never-played arm"),
        ),
    )

    # 2. every declared constant is a constructor keyword with the declared default
    def __init__(self, optimism: float = 1.0) -> None:
        super().__init__()
        self.optimism = float(optimism)

    # 3. reset(env, horizon): a fresh run (clear t, cum_regret and the oracle log)
    def reset(self, env, horizon: int) -> None:
        Policy.__init__(self)
        self.env, self.horizon = env, int(horizon)
        self.n = np.zeros(env.d, dtype=np.int64)  # plays of each base arm
        self.sums = np.zeros(env.d)  # sum of its outcomes

    # 4. advance(until): play rounds t+1 .. until, keep t and cum_regret exact
    def advance(self, until: int) -> int:
        env = self.env
        while self.t < until:
            t = self.t + 1
            means = np.where(self.n > 0, self.sums / np.maximum(self.n, 1), self.optimism)
            action = env.family.argmax_linear(means)  # one oracle call ...
            self.log.record(t, self.log.new_round(), "argmax")  # ... recorded
            y = env.play_fixed(action, t, 1)[0]  # outcomes of the chosen base arms
            arms = np.flatnonzero(action)
            self.n[arms] += 1
            self.sums[arms] += y
            self.cum_regret += env.gap(action)  # exact pseudo-regret r(a*) - r(a_t)
            self.t = t
        return self.t


register_algorithm(Greedy, replace=True)  # replace=True: rerunning the cell is fine
"""

_ETC = """
class ExploreThenCommit(Policy):
    \"\"\"Play every base arm `explore` times (least-played first), then commit for good to
    the action with the best empirical means: one oracle call after exploration.\"\"\"

    declaration = AlgorithmDeclaration(
        name="my-ETC",
        problem="cmab",
        reference="explore-then-commit (Lattimore & Szepesvari 2020, Chapter 6)",
        rewards=("linear",),
        per_round=False,  # rare oracle calls, like AROQ-CMAB
        doc="uniform exploration, then one oracle call and commit",
        constants=(
            Constant("explore", 40, kind="int", low=1, high=100_000, doc="plays of each arm"),
        ),
    )

    def __init__(self, explore: int = 40) -> None:
        super().__init__()
        self.explore = int(explore)

    def reset(self, env, horizon: int) -> None:
        Policy.__init__(self)
        self.env, self.horizon = env, int(horizon)
        self.n = np.zeros(env.d, dtype=np.int64)
        self.sums = np.zeros(env.d)
        self.committed = None

    def advance(self, until: int) -> int:
        env = self.env
        while self.t < until:
            t = self.t + 1
            if self.committed is None and self.n.min() < self.explore:
                # exploring: the m least-played arms (a feasible action of the family)
                action = env.family.argmax_linear(-self.n.astype(float))
            else:
                if self.committed is None:  # the single oracle call on the learnt means
                    self.committed = env.family.argmax_linear(self.sums / self.n)
                    self.log.record(t, self.log.new_round(), "commit")
                action = self.committed
            y = env.play_fixed(action, t, 1)[0]
            arms = np.flatnonzero(action)
            self.n[arms] += 1
            self.sums[arms] += y
            self.cum_regret += env.gap(action)
            self.t = t
        return self.t


register_algorithm(ExploreThenCommit, replace=True)
result = simulate(spec, ["my-greedy", "my-ETC", "AROQ-CMAB"], horizon=T, runs=R, seed=1)
print(result.to_table())
# Greedy often locks onto a suboptimal action (linear regret); ETC pays for its exploration
# (about d * explore / m rounds) and then, if explore was large enough, nothing.  AROQ-CMAB
# needs no explore constant and a handful of oracle calls; try explore = 10 and 200:
for e in (10, 200):
    r = simulate(spec, ["my-ETC"], horizon=T, runs=R, seed=1, params={"my-ETC": {"explore": e}})
    print(e, round(float(r["my-ETC"].final_regret.mean()), 1))
"""

NB06 = notebook(
    "Write your own policy and race it against AROQ-CMAB",
    """
The dashboard's algorithms are classes that **declare themselves**: name, problem, paper
reference and user constants are data on the class, and the simulation, the CLI and the
dashboard read that one declaration (`docs/PLUGINS.md`). Your own policy follows the same public
contract: subclass `Policy`, give it a `declaration`, implement `reset(env, horizon)` and
`advance(until)`, then `register_algorithm` it. From then on it races in `simulate` and in the
dashboard exactly like AROQ-CMAB (Algorithm 1), on the same instance with the same noise.
""",
    [
        md(
            """
## Step 1: a policy in one cell

A greedy policy: every round, the action with the best empirical means. It is the simplest
learner, and it does not explore. Read the four numbered parts: they are the whole contract.
"""
        ),
        code(_GREEDY),
        md(
            """
## Step 2: the declaration checks your constants

You wrote no validation, yet a constant out of its declared bounds is one clear sentence
(on the command line: `error: ...` and exit code 2).
"""
        ),
        code(
            """
from dashboard.simulation.runner import simulate
from dashboard.simulation.specs import make_spec

spec = make_spec("cmab", d=10, m=3, reward="linear")
T, R = (20_000, 5) if BIG else (1_000, 2)
try:
    simulate(spec, ["my-greedy"], horizon=10, params={"my-greedy": {"optimism": -1}})
except ValueError as exc:
    print("refused:", exc)
"""
        ),
        md(
            """
## Step 3: race it against AROQ-CMAB

Same instance (`seed`), same outcomes for the $n$-th pull of an arm in a repetition (common
random numbers), so the curves differ only by the decisions.
"""
        ),
        code(
            """
from dashboard.ui import plots

result = simulate(spec, ["my-greedy", "AROQ-CMAB"], horizon=T, runs=R, seed=1)
print(result.to_table())
plots.regret_plot(result)
"""
        ),
        md(
            """
## Step 4: the same race in the dashboard

Your class is registered in this kernel, so the dashboard offers it next to the built-ins (its
constant appears on the constants card). The cell below runs the race once; change the
settings and press **Run** to race again.
"""
        ),
        code(
            """
from dashboard.ui.app import DashboardApp

race = DashboardApp(autostart_timer=False, first_frame_seconds=120)
race.config.apply_preset(
    {"problem": "cmab", "algorithms": ["my-greedy", "AROQ-CMAB"], "d": 10, "m": 3,
     "horizon": T, "runs": R, "seed": 1}
)
race.run()  # the first frame simulates the whole (small) horizon
race
"""
        ),
        *exercise(
            """
Greedy can lock onto a poor action for ever. Write `ExploreThenCommit` (name `my-ETC`): play
every base arm `explore` times (declare `explore` as an int constant, default 40), then call
the oracle **once** on the empirical means and commit to that action. Register it and race
`my-greedy`, `my-ETC` and `AROQ-CMAB`. How does ETC's regret depend on `explore`, and why does
AROQ-CMAB not need such a constant? (Hint: `env.family.argmax_linear(-n)` returns a feasible
action made of the least-played arms.)
""",
            _ETC,
        ),
        md(
            """
## Your turn: can you beat AROQ-CMAB?

Now *you* are the policy. Click $m$ arms, press **Play this round**, read the outcomes and decide
again; AROQ-CMAB plays the same instance with the same random numbers, and its regret curve is
drawn beside yours. The true means are revealed after the last round.
`panel serve notebooks/06-your-own-policy.ipynb` runs the notebook and serves this game as a web
app (in Jupyter, `.servable()` changes nothing).
"""
        ),
        code(
            """
from dashboard.ui.play import PlayView

game = PlayView.new(make_spec("cmab", d=6, m=2), ["AROQ-CMAB", "my-greedy"], horizon=30, seed=7)
game.servable(title="Can you beat AROQ-CMAB?")
"""
        ),
    ],
)

NOTEBOOKS = {
    "01-oracle-calls.ipynb": NB01,
    "02-scheduled-queries.ipynb": NB02,
    "03-semiparametric-shifts.ipynb": NB03,
    "04-experimental-design.ipynb": NB04,
    "05-sbe.ipynb": NB05,
    "06-your-own-policy.ipynb": NB06,
    "10-reproduce-combinatorial.ipynb": NB10,
    "11-reproduce-semiparametric.ipynb": NB11,
}


def main() -> None:
    """Write every notebook next to this script (outputs empty by construction)."""
    for name, nb in NOTEBOOKS.items():
        nbformat.validate(nb)
        nbformat.write(nb, HERE / name)
        print(f"wrote notebooks/{name} ({len(nb.cells)} cells)")


if __name__ == "__main__":
    main()
