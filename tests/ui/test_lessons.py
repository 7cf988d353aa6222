"""Tests of the lessons (lessons/*.md) and their loader (dashboard/ui/lessons.py).

They prove that every lesson has the structure the dashboard relies on, that every preset is a
valid set of dashboard parameters, that the math is balanced and uses KaTeX-supported commands
only, and that the loader rejects broken lessons with a message naming the file.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.algorithms import registry
from dashboard.ui import lessons as L

LESSONS = L.load_lessons()
IDS = [f"{lesson.number:02d}-{lesson.slug}" for lesson in LESSONS]

# TeX commands used by the lessons, each checked against KaTeX's list of supported functions
# (https://katex.org/docs/supported.html).  A new command must be checked there and added here.
KATEX_COMMANDS = {
    # greek
    "alpha", "beta", "delta", "Delta", "epsilon", "varepsilon", "eta", "theta", "lambda", "mu",
    "nu", "pi", "sigma", "Sigma", "tau", "Theta", "Omega", "Gamma", "ell",
    # operators and relations
    "sum", "sqrt", "frac", "dfrac", "tfrac", "log", "ln", "max", "min", "arg", "det", "sin",
    "exp", "operatorname", "bmod", "le", "ge", "lt", "gt", "ne", "approx", "lesssim", "sim",
    "succeq", "preceq", "in", "subseteq", "setminus", "mid", "to", "gets", "Longrightarrow",
    "times", "cdot", "pm", "infty", "mapsto", "emptyset", "top", "star", "ast", "dagger", "dots",
    # fonts and accents
    "mathbb", "mathbf", "mathcal", "mathrm", "boldsymbol", "text", "hat", "widehat", "tilde",
    "widetilde", "bar", "overline", "underline",
    # delimiters, spacing, environments
    "left", "right", "big", "Big", "langle", "rangle", "lceil", "rceil", "quad", "qquad",
    "begin", "end",
}  # fmt: skip
KATEX_ENVIRONMENTS = {"aligned", "cases"}

PRESET_BLOCK = '```preset\n{"problem": "cmab", "algorithms": ["CUCB"], "d": 5, "m": 2}\n```'

VALID_LESSON = """# A title

## Learning goals

- one goal with math $a_t$.

## Intuition

Some words.

## Key equations

$$
x = \\frac{1}{2}
$$

## Try it

```preset
{"problem": "cmab", "algorithms": ["CUCB"], "d": 5, "m": 2}
```

Look at the regret plot.

## Predict before you run

1. A question?

## Answers

<details><summary>Answer 1</summary>

An answer.

</details>
"""


def _numbered_questions(body: str) -> list[int]:
    return [int(m.group(1)) for m in re.finditer(r"^(\d+)\.\s", body, flags=re.M)]


def _strip_braces(tex: str) -> str:
    return tex.replace("\\{", "").replace("\\}", "")


# --- the set of lessons -------------------------------------------------------------------------
def test_at_least_seven_lessons_numbered_one_to_n_without_gaps():
    assert len(LESSONS) >= 7
    assert [lesson.number for lesson in LESSONS] == list(range(1, len(LESSONS) + 1))
    slugs = [lesson.slug for lesson in LESSONS]
    assert len(set(slugs)) == len(slugs)


def test_lessons_dir_is_the_repository_lessons_folder():
    repo = Path(__file__).resolve().parents[2]
    assert L.lessons_dir() == repo / "lessons"
    assert {lesson.path.name for lesson in LESSONS} == {
        p.name for p in (repo / "lessons").glob("[0-9]*-*.md")
    }


# --- structure of every lesson ------------------------------------------------------------------
@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_lesson_has_single_title_and_all_sections_in_order(lesson):
    assert lesson.title and not lesson.title.startswith("#")
    assert "$" not in lesson.title, "the title is shown as plain text in the lesson list"
    assert sum(1 for line in lesson.markdown.splitlines() if re.match(r"#\s", line)) == 1
    required = [name for name in lesson.sections if name in L.SECTIONS]
    assert required == list(L.SECTIONS)
    for name in L.SECTIONS:
        assert lesson.sections[name].strip(), f"section {name!r} is empty"
    assert 80 <= len(lesson.markdown.splitlines()) <= 170


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_learning_goals_are_bullets_and_sources_are_cited(lesson):
    goals = [ln for ln in lesson.sections["Learning goals"].splitlines() if ln.startswith("- ")]
    assert len(goals) >= 3
    cited = re.findall(
        r"(?:Algorithm|Theorem|Eq\.|Lemma|Section|Appendix)\s*\(?\d", lesson.markdown
    )
    assert len(cited) >= 3, "lessons must cite paper sections / algorithms / equations"


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_key_equations_have_display_math(lesson):
    spans = L.math_spans("\n" + lesson.sections["Key equations"] + "\n")
    assert sum(span.display for span in spans) >= 3


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_try_it_has_one_preset_block_and_says_what_to_look_at(lesson):
    body = lesson.sections["Try it"]
    assert body.count("```preset\n") == 1
    assert lesson.markdown.count("```preset\n") == 1
    # named presets: one more block each, in the same section
    assert (
        lesson.markdown.count("```preset ") == body.count("```preset ") == len(lesson.named_presets)
    )
    after = body.split("```preset", 1)[1].split("```", 1)[1]
    assert re.search(r"\bplot\b", after), "say which plot to look at"
    # the preset in the section is the one the loader returns
    block = body.split("```preset", 1)[1].split("```", 1)[0]
    assert json.loads(block) == lesson.preset
    for name, preset in lesson.named_presets.items():
        block = body.split(f"```preset {name}\n", 1)[1].split("```", 1)[0]
        assert json.loads(block) == preset


def test_lesson_4_offers_a_named_inexact_alpha_preset():
    lesson = L.load_lesson(4)
    preset = lesson.named_presets["inexact-alpha"]
    assert preset["actions"] == "paths" and "alpha-AROQ-CMAB" in preset["algorithms"]
    assert list(lesson.presets) == ["", "inexact-alpha"]
    assert L.preset_label("inexact-alpha") == "Load preset: inexact alpha"


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_every_question_has_one_hidden_answer_in_order(lesson):
    questions = _numbered_questions(lesson.sections["Predict before you run"])
    assert questions == list(range(1, len(questions) + 1)) and len(questions) >= 3
    answers = lesson.sections["Answers"]
    summaries = re.findall(r"<details><summary>Answer (\d+)</summary>", answers)
    assert [int(s) for s in summaries] == questions
    assert answers.count("<details>") == answers.count("</details>") == len(questions)
    # each answer has real content between its summary and its closing tag
    for body in re.findall(r"</summary>(.*?)</details>", answers, flags=re.S):
        assert len(body.split()) >= 15


# --- presets ------------------------------------------------------------------------------------
@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_every_preset_passes_validation(lesson):
    for preset in lesson.presets.values():  # the main one and the named ones
        assert L.validate_preset_basic(preset) == []


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_presets_run_in_seconds_and_name_registered_algorithms(lesson):
    for preset in lesson.presets.values():
        assert preset.get("horizon", 0) <= 100_000
        for name in preset["algorithms"]:
            assert registry.algorithm_info(name, preset["problem"]).name == name


def test_lessons_cover_both_papers():
    problems = {lesson.preset["problem"] for lesson in LESSONS}
    assert problems == {"cmab", "semiparametric"}


# --- math ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_dollars_are_balanced(lesson):
    # independent of math_spans: count unescaped "$" outside code; "$$" lines must pair up
    text = re.sub(r"^```.*?^```", "", lesson.markdown, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    assert len(re.findall(r"(?<!\\)\$", text)) % 2 == 0
    assert sum(1 for line in text.splitlines() if line.strip() == "$$") % 2 == 0
    for line in text.splitlines():
        if line.strip() != "$$":
            assert len(re.findall(r"(?<!\\)\$", line)) % 2 == 0, line
    L.math_spans(lesson.markdown)  # raises on an open block or an unclosed inline span


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_math_spans_have_balanced_braces_and_katex_commands(lesson):
    spans = L.math_spans(lesson.markdown)
    assert spans
    for span in spans:
        tex = span.tex
        depth = 0
        for ch in _strip_braces(tex):
            depth += {"{": 1, "}": -1}.get(ch, 0)
            assert depth >= 0, f"line {span.line}: '}}' before '{{' in {tex!r}"
        assert depth == 0, f"line {span.line}: unbalanced braces in {tex!r}"
        assert len(re.findall(r"\\left(?![a-z])", tex)) == len(re.findall(r"\\right(?![a-z])", tex))
        begins = re.findall(r"\\begin\{(\w+)\}", tex)
        assert begins == re.findall(r"\\end\{(\w+)\}", tex)
        assert set(begins) <= KATEX_ENVIRONMENTS, begins
        unknown = set(re.findall(r"\\([A-Za-z]+)", tex)) - KATEX_COMMANDS
        assert not unknown, f"line {span.line}: not in the KaTeX list: {sorted(unknown)}"
        # HTML- and Markdown-hostile characters: use \lt, \gt, \ast instead
        assert not set(tex) & set("<>*"), f"line {span.line}: {tex!r}"


# --- what the dashboard displays ----------------------------------------------------------------
@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_markdown_without_preset_replaces_only_the_block(lesson):
    shown = L.lesson_markdown_without_preset(lesson)
    assert "```preset" not in shown and '"algorithms"' not in shown
    assert shown.count("Click *Load this lesson's preset*") == 1
    original = lesson.markdown.splitlines()
    expected = list(original)
    for name in reversed(list(lesson.named_presets)):
        first = expected.index(f"```preset {name}")
        last = expected.index("```", first + 1)
        sentence = f"Click *{L.preset_label(name)}* to set up this experiment in the dashboard."
        expected = [*expected[:first], sentence, *expected[last + 1 :]]
        assert shown.count(sentence) == 1
    first = expected.index("```preset")
    last = expected.index("```", first + 1)
    assert shown.splitlines() == [*expected[:first], L.PRESET_SENTENCE, *expected[last + 1 :]]


@pytest.mark.parametrize("lesson", LESSONS, ids=IDS)
def test_protected_math_survives_a_commonmark_renderer(lesson):
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("gfm-like")
    rendered = md.render(L.lesson_markdown_without_preset(lesson, protect=True))
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    for span in L.math_spans(L.lesson_markdown_without_preset(lesson)):
        assert span.tex.strip() in text, f"line {span.line}: TeX changed by the renderer"
    assert rendered.count("<details>") == lesson.sections["Answers"].count("<details>")


def test_protect_math_is_needed_and_keeps_text_outside_math():
    text = "A *word* and $\\{x_{i}\\}_{i} \\| y \\|_2 \\\\$ end.\n"
    protected = L.protect_math(text)
    assert protected.startswith("A *word* and $") and protected.endswith("$ end.\n")
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("gfm-like")
    plain = html.unescape(re.sub(r"<[^>]+>", "", md.render(text)))
    safe = html.unescape(re.sub(r"<[^>]+>", "", md.render(protected)))
    tex = "$\\{x_{i}\\}_{i} \\| y \\|_2 \\\\$"
    assert tex not in plain  # CommonMark eats the backslashes...
    assert tex in safe  # ...unless the math is protected


def test_math_spans_finds_inline_and_display_and_skips_code():
    text = "a $x$ b `$not math$`\n\n$$\ny = 1\n$$\n\n```\n$ code\n```\n"
    spans = L.math_spans(text)
    assert [(s.tex, s.display) for s in spans] == [("x", False), ("y = 1", True)]
    assert text[spans[0].start : spans[0].end] == "$x$"
    assert text[spans[1].start : spans[1].end] == "$$\ny = 1\n$$"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a $x\n", "odd number"),
        ("$$\nx\n", "never closed"),
        ("$$\nx\n\ny\n$$\n", "blank line"),
        ("a $$x$$ b\n", "own lines"),
    ],
)
def test_math_spans_rejects_unbalanced_math(text, message):
    with pytest.raises(ValueError, match=message):
        L.math_spans(text)


# --- parse errors -------------------------------------------------------------------------------
def test_valid_template_parses():
    lesson = L.parse_lesson(VALID_LESSON, "09-template.md")
    assert (lesson.number, lesson.slug, lesson.title) == (9, "template", "A title")
    assert lesson.preset["algorithms"] == ["CUCB"]
    assert list(lesson.sections) == list(L.SECTIONS)
    assert lesson.sections["Intuition"] == "Some words."
    assert PRESET_BLOCK in lesson.sections["Try it"]
    assert lesson.named_presets == {} and list(lesson.presets) == [""]
    named = L.parse_lesson(
        VALID_LESSON.replace(
            PRESET_BLOCK, PRESET_BLOCK + "\n" + PRESET_BLOCK.replace("preset", "preset harder-one")
        ),
        "09-template.md",
    )
    assert named.named_presets == {"harder-one": named.preset}


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (VALID_LESSON.replace("## Intuition\n", ""), "missing section '## Intuition'"),
        (VALID_LESSON.replace("## Answers", "## Answer"), "missing section '## Answers'"),
        (
            VALID_LESSON.replace("## Learning goals", "## Tmp")
            .replace("## Intuition", "## Learning goals")
            .replace("## Tmp", "## Intuition"),
            "out of order",
        ),
        (VALID_LESSON.replace("# A title\n", ""), "exactly one H1"),
        (VALID_LESSON + "\n# Second title\n", "exactly one H1"),
        (VALID_LESSON.replace("```preset", "```json"), "missing preset block"),
        (VALID_LESSON.replace('"d": 5,', '"d": 5,,'), "not valid JSON"),
        (VALID_LESSON.replace(PRESET_BLOCK, '```preset\n["cmab", "CUCB"]\n```'), "JSON object"),
        (VALID_LESSON.replace('"problem": "cmab", ', ""), "no 'problem' key"),
        (
            VALID_LESSON.replace("Some words.", '```preset\n{"problem": "cmab"}\n```'),
            "exactly one is allowed",
        ),
        (
            VALID_LESSON.replace(PRESET_BLOCK, "").replace("Some words.", PRESET_BLOCK),
            "inside the '## Try it' section",
        ),
        (VALID_LESSON.replace(PRESET_BLOCK, PRESET_BLOCK[:-3]), "never closed"),
        # named presets (``preset NAME``): after the main block, named well, unique, few
        (
            VALID_LESSON.replace(
                PRESET_BLOCK,
                PRESET_BLOCK + "\n" + PRESET_BLOCK.replace("preset", "preset Big_One"),
            ),
            "lower-case words joined by dashes",
        ),
        (
            VALID_LESSON.replace(PRESET_BLOCK, PRESET_BLOCK.replace("preset", "preset other")),
            "missing preset block",
        ),
        (
            VALID_LESSON.replace(
                PRESET_BLOCK, PRESET_BLOCK.replace("preset", "preset two") + "\n" + PRESET_BLOCK
            ),
            "must come after the main preset block",
        ),
        (
            VALID_LESSON.replace(
                PRESET_BLOCK, PRESET_BLOCK + 2 * ("\n" + PRESET_BLOCK.replace("preset", "preset x"))
            ),
            "two preset blocks are named 'x'",
        ),
        (
            VALID_LESSON.replace(
                PRESET_BLOCK,
                PRESET_BLOCK
                + "".join("\n" + PRESET_BLOCK.replace("preset", f"preset p{k}") for k in range(4)),
            ),
            "at most 3 besides its main one",
        ),
        (
            VALID_LESSON.replace(
                PRESET_BLOCK, PRESET_BLOCK + '\n```preset other\n{"problem": "cmab"}\n```'
            ),
            "no 'algorithms' key",
        ),
        (
            VALID_LESSON.replace("Some words.", PRESET_BLOCK.replace("preset", "preset early")),
            "inside the '## Try it' section",
        ),
        ("   \n", "empty"),
    ],
)
def test_parse_errors_name_the_file_and_the_problem(broken, message):
    with pytest.raises(ValueError, match=message) as info:
        L.parse_lesson(broken, Path("some/dir/04-broken-lesson.md"))
    assert "04-broken-lesson.md" in str(info.value)


@pytest.mark.parametrize("name", ["lesson.md", "4_broken.md", "04-Broken.md", "04-.md"])
def test_parse_rejects_bad_file_names(name):
    with pytest.raises(ValueError, match=r"NN-some-slug\.md"):
        L.parse_lesson(VALID_LESSON, name)


# --- loading from folders -----------------------------------------------------------------------
def _write(folder: Path, name: str, text: str = VALID_LESSON) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_env_var_overrides_the_folder_and_other_files_are_ignored(tmp_path, monkeypatch):
    _write(tmp_path, "02-second.md")
    _write(tmp_path, "01-first.md")
    _write(tmp_path, "README.md", "# not a lesson\n")
    monkeypatch.setenv(L.ENV_VAR, str(tmp_path))
    assert L.lessons_dir() == tmp_path
    loaded = L.load_lessons()
    assert [(x.number, x.slug) for x in loaded] == [(1, "first"), (2, "second")]
    assert L.load_lesson(2).slug == "second"
    assert L.load_lesson("02").slug == "second"
    assert L.load_lesson("first").number == 1
    assert L.load_lesson("01-first").number == 1
    assert L.load_lesson("01-first.md").number == 1
    with pytest.raises(ValueError, match=r"no lesson 'third'; available lessons: 1 \(first\)"):
        L.load_lesson("third")


def test_duplicate_numbers_and_missing_folder_are_rejected(tmp_path):
    _write(tmp_path, "01-first.md")
    _write(tmp_path, "1-again.md")
    with pytest.raises(ValueError, match="both have number 1"):
        L.load_lessons(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        L.load_lessons(tmp_path / "nope")


def test_a_broken_lesson_in_a_folder_is_reported_by_name(tmp_path):
    _write(tmp_path, "01-first.md")
    _write(tmp_path, "02-bad.md", VALID_LESSON.replace("## Answers", "## Solutions"))
    with pytest.raises(ValueError, match=r"02-bad\.md: missing section '## Answers'"):
        L.load_lessons(tmp_path)


# --- preset validation --------------------------------------------------------------------------
GOOD_CMAB = {"problem": "cmab", "algorithms": ["CUCB", "AROQ-CMAB"], "d": 10, "m": 3}
GOOD_SP = {"problem": "semiparametric", "algorithms": ["SBE"], "d": 5, "K": 10, "shift": "sine"}


def test_minimal_presets_are_fine():
    assert L.validate_preset_basic(GOOD_CMAB) == []
    assert L.validate_preset_basic(GOOD_SP) == []
    assert L.validate_preset_basic({"problem": "semiparametric", "algorithms": ["sbe"]}) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"K": 10}, "unknown key 'K' for problem 'cmab'"),
        # bounds and types come from the one problem schema (dashboard/simulation/specs.py)
        ({"horizon": "1000"}, "horizon T must be an integer from 1 to 10_000_000, got '1000'"),
        ({"horizon": 0}, "horizon T must be an integer from 1 to 10_000_000, got 0"),
        ({"horizon": 10**400}, "got a 401-digit integer"),
        ({"runs": 257}, "runs must be an integer from 1 to 256"),
        ({"runs": True}, "runs must be an integer from 1 to 256, got True"),
        ({"seed": -1}, "seed must be an integer from 0 to"),
        ({"d": 501}, "d must be an integer from 1 to 500 for the cmab problem"),
        # a lesson runs in class: the work estimate, not ad-hoc caps, keeps presets small
        ({"horizon": 5_000_000, "runs": 64}, "a lesson preset must run within 60 s"),
        ({"m": 11}, "'m' (11) must not exceed 'd' (10)"),
        ({"actions": "trees"}, "'actions' must be one of"),
        ({"reward": "quadratic"}, "'reward' must be one of"),
        ({"oracle_delay": 1.5}, "oracle_delay must be a number >= 0 and <= 1"),
        ({"oracle_delay": 0.5}, "a lesson preset must run within 60 s"),
        ({"alpha": 1.5}, "alpha must be a number > 0 and <= 1"),
        ({"algorithms": ["CUCB", "NoSuchAlgo"]}, "unknown algorithm 'NoSuchAlgo'"),
        ({"algorithms": ["CUCB", "SBE"]}, "'SBE' belongs to the 'semiparametric' problem"),
        ({"reward": "general"}, "'CUCB' does not support the 'general' reward model"),
        ({"algorithms": ["CUCB"] * 2}, "more than once"),
        (
            {"algorithms": ["CUCB", "AROQ-CMAB", "SROQ-CMAB", "alpha-AROQ-CMAB", "SDCB"]},
            "at most 4 allowed",
        ),
        ({"algorithms": []}, "empty"),
        ({"algorithms": "CUCB"}, "must be a list of names"),
        ({"problem": "mab"}, "'problem' must be one of cmab, semiparametric"),
    ],
)
def test_cmab_preset_problems_are_reported(change, message):
    problems = L.validate_preset_basic({**GOOD_CMAB, **change})
    assert any(message in p for p in problems), problems


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"d": 201}, "d must be an integer from 1 to 200 for the semiparametric problem"),
        ({"K": 1}, "K must be an integer from 2 to 2000"),
        ({"shift": "cosine"}, "'shift' must be one of"),
        ({"magnitude": 101}, "magnitude must be a number >= 0 and <= 100"),
        ({"gap": 0}, "gap must be a number > 0 and <= 2"),
        ({"noise": "1"}, "noise must be a number >= 0 and <= 100, got '1'"),
        ({"m": 2}, "unknown key 'm' for problem 'semiparametric'"),
        ({"algorithms": ["SBE", "CUCB"]}, "'CUCB' belongs to the 'cmab' problem"),
    ],
)
def test_semiparametric_preset_problems_are_reported(change, message):
    problems = L.validate_preset_basic({**GOOD_SP, **change})
    assert any(message in p for p in problems), problems


def test_general_reward_algorithms_accept_general_rewards_only_where_registered():
    general = {**GOOD_CMAB, "reward": "general", "algorithms": ["AROQ-GR-CMAB", "SDCB"]}
    # SDCB solves an optimisation every round (~1.5 ms per run at d = 20, one run): T = 10^5
    # with 3 runs is estimated at minutes, too slow for a lesson; a shorter horizon is fine
    slow = {**general, "horizon": 100_000, "runs": 3}
    assert any("must run within 60 s" in p for p in L.validate_preset_basic(slow))
    assert L.validate_preset_basic({**general, "horizon": 1000, "runs": 1}) == []
    disc = {**GOOD_CMAB, "algorithms": ["Disc-AROQ-GR-CMAB"]}  # linear reward by default
    assert any("does not support the 'linear'" in p for p in L.validate_preset_basic(disc))


@pytest.mark.parametrize("bad", [None, [], "cmab", 3])
def test_non_object_presets_and_missing_keys(bad):
    assert L.validate_preset_basic(bad) == [
        f"the preset must be a JSON object (dict), got {type(bad).__name__}"
    ]
    problems = L.validate_preset_basic({})
    assert any("missing 'problem'" in p for p in problems)
    assert any("missing 'algorithms'" in p for p in problems)


# --- import hygiene -----------------------------------------------------------------------------
def test_loader_does_not_import_ui_libraries():
    code = (
        "import sys, dashboard.ui.lessons as m; m.load_lessons(); "
        "bad = [x for x in ('panel', 'holoviews', 'bokeh', 'param') if x in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def _katex_js() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("panel")  # locate panel's bundled KaTeX without importing
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("dist/bundled/katex/katex@*/dist/katex.min.js"))
    return found[-1] if found else None


def test_every_math_span_renders_with_katex(tmp_path):
    import shutil

    node, katex = shutil.which("node"), _katex_js()
    if node is None or katex is None:
        pytest.skip("needs node and panel's bundled KaTeX (the browser tests cover this too)")
    spans = [
        {"where": f"{lesson.path.name}:{span.line}", "tex": span.tex, "display": span.display}
        for lesson in LESSONS
        for span in L.math_spans(lesson.markdown)
    ]
    (tmp_path / "spans.json").write_text(json.dumps(spans), encoding="utf-8")
    script = tmp_path / "check.js"
    script.write_text(
        f"const katex = require({json.dumps(str(katex))});\n"
        f"const spans = require({json.dumps(str(tmp_path / 'spans.json'))});\n"
        "const bad = [];\n"
        "for (const s of spans) {\n"
        "  try { katex.renderToString(s.tex, {displayMode: s.display, throwOnError: true,"
        " strict: 'error'}); }\n"
        "  catch (e) { bad.push(s.where + ': ' + e.message); }\n"
        "}\n"
        "console.log(JSON.stringify({n: spans.length, bad}));\n",
        encoding="utf-8",
    )
    out = subprocess.run(
        [node, str(script)], capture_output=True, text=True, check=True, timeout=60
    )
    report = json.loads(out.stdout)
    assert report["n"] == len(spans) > 0
    assert report["bad"] == []
