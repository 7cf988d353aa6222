"""The notebooks' markdown writes maths as LaTeX, and each notebook ends with a servable cell.

Fast checks, nothing is executed:

* every notebook typesets maths (``$...$`` / ``$$...$$``, rendered by Jupyter's MathJax in the
  notation of ``lessons/*.md``), no markdown cell keeps a formula in a code span or as plain
  text (``sqrt(T)``, ``x^T``, ``>=``), and every ``$`` is paired;
* the LaTeX arrived intact: ``notebooks/build_notebooks.py`` writes every markdown string that
  holds LaTeX as a raw string (in a normal string ``\\tau`` would become a TAB and ``\\nu`` a
  line break), so no cell holds control characters;
* ``panel serve`` can compile each notebook (it pastes markdown cells into a Python string
  without escaping backslashes, so ``\\u``, ``\\x`` or ``\\N`` in LaTeX would be a syntax error),
  and the last code cell of every notebook is ``.servable()``;
* the ``.ipynb`` files are exactly what the builder generates.
"""

from __future__ import annotations

import importlib.util
import io
import re
import tokenize
import warnings
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
BUILDER = NB_DIR / "build_notebooks.py"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))

#: Least number of maths spans (inline plus display) per notebook; the plug-in notebook is
#: about code and has little maths.
MIN_MATHS = {"06-your-own-policy.ipynb": 1}
DEFAULT_MIN_MATHS = 3

FENCED = re.compile(r"^(```|~~~).*?^\1", flags=re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", flags=re.S)
DISPLAY = re.compile(r"\$\$(.+?)\$\$", flags=re.S)
INLINE = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$", flags=re.S)
#: What a formula looks like in plain text or in a code span.
MATHS_LIKE = re.compile(r"sqrt|\blog\b|\^|_\{|>=|<=|\blog2\b")


def _builder():
    spec = importlib.util.spec_from_file_location("build_notebooks", BUILDER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markdown(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


def _split(source: str) -> tuple[str, list[str], list[str], list[str]]:
    """``(prose, code spans, display maths, inline maths)`` of one markdown cell."""
    text = FENCED.sub(" ", source)
    spans = [m.group(2) for m in CODE_SPAN.finditer(text)]
    text = CODE_SPAN.sub(" ", text)
    display = DISPLAY.findall(text)
    text = DISPLAY.sub(" ", text)
    inline = INLINE.findall(text)
    text = INLINE.sub(" ", text)
    return text, spans, display, inline


def test_the_splitter_finds_maths_and_code() -> None:
    """The helpers themselves: a positive and a negative example."""
    prose, spans, display, inline = _split(
        "Run `simulate(horizon=T)`, then $\\sqrt{T}$ and\n\n$$\nx_\\tau \\ge 1\n$$\nend `log T`"
    )
    assert spans == ["simulate(horizon=T)", "log T"]
    assert display == ["\nx_\\tau \\ge 1\n"] and inline == ["\\sqrt{T}"]
    assert "$" not in prose and not MATHS_LIKE.search(prose)
    assert MATHS_LIKE.search(spans[1]) and not MATHS_LIKE.search(spans[0])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_markdown_typesets_its_maths(path: Path) -> None:
    count = 0
    for source in _markdown(path):
        prose, spans, display, inline = _split(source)
        count += len(display) + len(inline)
        assert "$" not in prose, f"{path.name}: unpaired $ in\n{source}"
        bad = [s for s in spans if MATHS_LIKE.search(s)]
        assert not bad, f"{path.name}: formulas in code spans {bad}; write them as $...$"
        plain = MATHS_LIKE.findall(prose)
        assert not plain, f"{path.name}: a plain-text formula ({plain}) in\n{source}"
        for maths in inline:
            assert "\n\n" not in maths, f"{path.name}: inline maths over a paragraph: {maths!r}"
            assert maths.strip() == maths, f"{path.name}: ${maths}$ has outer spaces"
    floor = MIN_MATHS.get(path.name, DEFAULT_MIN_MATHS)
    assert count >= floor, f"{path.name}: {count} typeset formulas, expected at least {floor}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_latex_survived_python_escaping(path: Path) -> None:
    """No TAB, form feed, backspace, ... in markdown: the marks of ``\\tau``, ``\\frac``,
    ``\\bar`` written in a normal (not raw) Python string."""
    for source in _markdown(path):
        control = sorted({repr(ch) for ch in source if ord(ch) < 32 and ch != "\n"})
        assert not control, f"{path.name}: control characters {control} in\n{source}"
        assert "\\\\" not in source, f"{path.name}: a doubled backslash in\n{source}"


def test_builder_writes_latex_in_raw_strings() -> None:
    """Every string literal of the builder that holds both ``$`` and a backslash is raw."""
    tokens = tokenize.generate_tokens(io.StringIO(BUILDER.read_text(encoding="utf-8")).readline)
    offenders = []
    for tok in tokens:
        if tok.type != tokenize.STRING:
            continue
        prefix = re.match(r"[a-zA-Z]*", tok.string).group(0).lower()
        if "$" in tok.string and "\\" in tok.string and "r" not in prefix:
            offenders.append(f"line {tok.start[0]}: {tok.string[:60]!r}")
    assert not offenders, "LaTeX in a non-raw string: " + "; ".join(offenders)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_last_code_cell_is_servable(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    assert ".servable(" in last.source, f"{path.name}: the last code cell is not servable"
    assert "solution" not in last.metadata.get("tags", [])


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_panel_serve_can_compile_the_notebook(path: Path) -> None:
    """``panel serve`` turns the notebook into one script (markdown cells become strings)."""
    pytest.importorskip("nbconvert")
    from panel.io.handlers import parse_notebook

    _, code, _ = parse_notebook(str(path))
    with warnings.catch_warnings():
        # "invalid escape sequence": the markdown strings are mangled, but unused once the
        # last cell is servable (Panel then serves that cell, not the cells' outputs)
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", SyntaxWarning)
        compile(code, str(path), "exec")


def test_notebooks_equal_the_builders_output() -> None:
    module = _builder()
    assert set(module.NOTEBOOKS) == {p.name for p in NOTEBOOKS}
    for name, nb in module.NOTEBOOKS.items():
        nbformat.validate(nb)
        committed = (NB_DIR / name).read_text(encoding="utf-8")
        assert nbformat.writes(nb).rstrip("\n") == committed.rstrip("\n"), (
            f"{name} is stale: run python notebooks/build_notebooks.py"
        )
