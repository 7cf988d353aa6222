"""The page URL and the configuration, key by key, with a notice for every refused key.

A shared link is user input.  :func:`parse_query` checks each query key on its own against the
:class:`~dashboard.ui.model.Config` parameter it names (the URL keys are Config's own
parameters, not a second list): integers are read digit-limited before any conversion,
numbers must be finite and within the parameter's bounds, selectors take one of their
objects, algorithm names must be offered for the problem and reward model the link leaves
(the algorithm picker's options: another problem's or an unknown name is refused, so it
never reaches the widget), constants must be ``{algorithm: {name: value}}``
with declared names and values of the declared kind.  A refused key keeps the current value
and yields one sentence naming the key, what was ignored and what is allowed.

:func:`apply_query` then applies every accepted value in one ``param.update`` (all watchers
see the final state, so the model, the widgets bound to it and the algorithm list agree).  If
that update still fails (a rule this module does not know), the configuration is restored and
the accepted keys are applied one at a time, each failure becoming a notice: never a
half-applied URL, never an exception.

:class:`UrlSync` keeps the URL in step with the configuration in a served page: it applies
the URL when the session starts and whenever the browser reports another address, and writes
the configuration's values back (refused keys are overwritten by the values really used).  It
replaces ``pn.state.location.sync``, whose reader applies a query in one update that a bad
value aborts half-way, and whose ``query_params`` parse huge or deeply nested values with
``int()`` / ``ast.literal_eval``.  Nothing here renders text: notices are plain sentences
that the view escapes (:mod:`dashboard.ui.safe`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

import param

from ..simulation.specs import FIELDS
from .model import MAX_ALGORITHMS, Config
from .safe import shorten

__all__ = [
    "EXTRA_KEYS",
    "MAX_KEYS",
    "MAX_QUERY_CHARS",
    "MAX_VALUE_CHARS",
    "UrlSync",
    "apply_query",
    "parse_query",
    "serialize",
    "split_query",
    "sync_flag",
    "truthy",
    "url_keys",
]

#: Longest value read for one key (a JSON list of four algorithms or a few constants fit
#: easily); longer values are refused with a notice, never parsed.
MAX_VALUE_CHARS = 2_000
#: Most characters of a query string looked at (a 200 kB link still loads: the rest is cut).
MAX_QUERY_CHARS = 20_000
#: Most query keys looked at.
MAX_KEYS = 64
#: Keys the page understands that are not configuration (see ``DashboardApp.apply_query``,
#: ``PageTabs.apply_query``; ``present=1``: present mode; ``theme=dark``: Panel's own theme).
EXTRA_KEYS: tuple[str, ...] = ("lesson", "autorun", "tab", "present", "theme")
#: Config parameters that are derived state, never read from (or written to) a URL.
_DERIVED = frozenset({"name", "algorithm_options", "errors"})
_INT = re.compile(r"[+-]?\d{1,15}")
_FLOAT = re.compile(r"[+-]?(\d{1,20}(\.\d{0,20})?|\.\d{1,20})([eE][+-]?\d{1,4})?")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def truthy(raw: Any) -> bool:
    """Whether an address value switches something on (``1``, ``true``, ``yes``, ``on``)."""
    return str(raw).strip().lower() in _TRUE


def sync_flag(location: Any, key: str, owner: param.Parameterized, name: str) -> None:
    """Write ``owner.<name>`` (a Boolean parameter) into the page address as ``key=1`` while
    it is on, and leave ``key`` out while it is off (every other key is kept)."""

    def write(event: Any) -> None:
        pairs = [(k, v) for k, v in split_query(location.search or "") if k != key]
        if event.new:
            pairs.append((key, "1"))
        search = "?" + urlencode(pairs) if pairs else ""
        if search != (location.search or ""):
            location.search = search

    owner.param.watch(write, name)


def url_keys(config: type[Config] | Config = Config) -> dict[str, str]:
    """Config parameter name -> URL key: every parameter of :class:`Config` except derived
    state (so a parameter added to Config is in the link without a second list)."""
    return {p: p for p in config.param if p not in _DERIVED}


class _Refused(ValueError):
    """One key's value was refused (the message is the notice's sentence)."""


def _bounds_text(p: param.Number) -> str:
    lo, hi = p.bounds or (None, None)
    kind = "whole numbers" if isinstance(p, param.Integer) else "numbers"
    if lo is not None and hi is not None:
        return f"{kind} from {lo:,} to {hi:,}".replace(",", "")
    if lo is not None:
        return f"{kind} of at least {lo}"
    return kind


def _number(p: param.Number, raw: str) -> int | float:
    text = raw.strip()
    integer = isinstance(p, param.Integer)
    pattern = _INT if integer else _FLOAT
    if not pattern.fullmatch(text):
        raise _Refused(f"allowed: {_bounds_text(p)}")
    value: int | float = int(text) if integer else float(text)
    if not integer and not math.isfinite(value):
        raise _Refused(f"allowed: {_bounds_text(p)}")
    lo, hi = p.bounds or (None, None)
    inc_lo, inc_hi = getattr(p, "inclusive_bounds", (True, True))
    too_low = lo is not None and (value < lo or (value == lo and not inc_lo))
    too_high = hi is not None and (value > hi or (value == hi and not inc_hi))
    if too_low or too_high:
        raise _Refused(f"allowed: {_bounds_text(p)}")
    return value


def _selector(p: param.Selector, raw: str) -> Any:
    objects = list(p.objects)
    lowered = raw.strip().lower()
    for obj in objects:
        if str(obj).lower() == lowered:
            return obj
    raise _Refused(f"allowed: {', '.join(str(o) for o in objects)}")


def _boolean(raw: str) -> bool:
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise _Refused("allowed: true or false")


def _json(raw: str, what: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise _Refused(f"it is not valid JSON; allowed: {what}") from None


def _known_algorithms() -> dict[str, str]:
    """Lower-case name -> registered spelling, over both problems."""
    names = [*Config.options_for("cmab"), *Config.options_for("semiparametric")]
    return {n.lower(): n for n in names}


def _algorithms(raw: str) -> list[str]:
    """The shape only (a JSON list of names); the names are checked against the problem the
    whole query asks for, in :func:`_check_algorithms`."""
    what = f'a JSON list of 1 to {MAX_ALGORITHMS} algorithm names, e.g. ["CUCB", "SROQ-CMAB"]'
    value = _json(raw, what)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise _Refused(f"allowed: {what}")
    if not 1 <= len(value) <= 2 * MAX_ALGORITHMS:
        raise _Refused(f"allowed: {what}")
    return value


def _check_algorithms(values: dict[str, Any], config: Config | type[Config]) -> str | None:
    """Check the query's algorithm names against the problem and reward model the query will
    leave (its own ``problem`` / ``reward`` if accepted, else the current ones): only names
    the algorithm picker offers are kept, so an unknown or another problem's name never
    reaches the widget.  Returns the refusal's reason (``values["algorithms"]`` is removed)."""
    problem = values.get("problem", config.problem)
    reward = values.get("reward", config.reward)
    try:
        values["algorithms"] = Config.check_algorithms(values["algorithms"], problem, reward)
    except ValueError as exc:
        del values["algorithms"]
        return str(exc)
    return None


def _constant_value(default: Any, value: Any) -> bool:
    """Whether ``value`` has the declared constant's kind (range checks are Config's)."""
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str) and len(value) <= 100
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value is None and default is None
    return math.isfinite(value)


def _constants(raw: str) -> dict[str, dict[str, Any]] | None:
    what = 'a JSON mapping {algorithm: {constant: value}}, e.g. {"CUCB": {"C": 2}}'
    value = _json(raw, what)
    if value is None or value == {}:
        return None
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise _Refused(f"allowed: {what}")
    known = _known_algorithms()
    scratch = Config()
    out: dict[str, dict[str, Any]] = {}
    for algorithm, entries in value.items():
        name = known.get(str(algorithm).strip().lower())
        if name is None:
            raise _Refused(
                f"unknown algorithm {shorten(algorithm, 80)!r}; allowed: "
                f"{', '.join(sorted(known.values()))}"
            )
        for constant, v in entries.items():
            try:
                default = scratch.constant(name, constant)
            except ValueError as exc:
                raise _Refused(shorten(exc, 300)) from None
            if not _constant_value(default, v):
                kind = "a word" if isinstance(default, str) else "a number"
                raise _Refused(f"{name}'s {constant} must be {kind} (got {shorten(v, 80)!r})")
        if entries:
            out[name] = dict(entries)
    return out or None


def _parse_value(p: param.Parameter, raw: str) -> Any:
    if isinstance(p, param.Boolean):
        return _boolean(raw)
    if isinstance(p, param.Number):  # Integer is a Number
        field = FIELDS.get(p.name)
        if field is not None and field.kind in ("int", "float"):
            # the problem schema's own parser: exact bounds before any conversion
            try:
                return field.parse(raw)
            except ValueError:
                raise _Refused(f"allowed: {_bounds_text(p)}") from None
        return _number(p, raw)
    if p.name == "algorithms":  # a ListSelector: before the (single) selectors
        return _algorithms(raw)
    if isinstance(p, param.Selector):
        return _selector(p, raw)
    if p.name == "constants":
        return _constants(raw)
    if isinstance(p, param.String):
        return raw
    raise _Refused("this setting cannot be set from the address")


def split_query(search: str) -> list[tuple[str, str]]:
    """``?a=1&b=2`` -> ``[(key, value), ...]``, bounded: at most :data:`MAX_QUERY_CHARS`
    characters and :data:`MAX_KEYS` keys are looked at (the cut is reported by
    :func:`parse_query`)."""
    text = search[1:] if search.startswith("?") else search
    return parse_qsl(text[:MAX_QUERY_CHARS], keep_blank_values=True)[: MAX_KEYS + 1]


def parse_query(
    query: str | Mapping[str, Any] | Iterable[tuple[str, Any]],
    config: Config | type[Config] = Config,
) -> tuple[dict[str, Any], list[str]]:
    """Check a URL query key by key against Config's parameters.

    Parameters
    ----------
    query : str or mapping or pairs
        ``"?d=5&K=1"``, ``{"d": "5"}`` (values may be lists of str / bytes, as in
        ``pn.state.session_args``), or ``[(key, value), ...]``.
    config : Config
        Whose parameters define the keys (the class or an instance).

    Returns
    -------
    (values, notices)
        ``values``: parameter name -> checked value, for the accepted keys.  ``notices``:
        one plain (unescaped) sentence per refused key, naming it, what was ignored and what
        is allowed.  Never raises.
    """
    notices: list[str] = []
    if isinstance(query, str):
        if len(query) > MAX_QUERY_CHARS + 1:
            notices.append(
                f"The address is {len(query):,} characters long: only its first "
                f"{MAX_QUERY_CHARS:,} were read."
            )
        pairs = split_query(query)
    else:
        items = query.items() if isinstance(query, Mapping) else query
        pairs = []
        for key, value in items:
            if isinstance(value, (list, tuple)):
                value = value[0] if value else ""
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            pairs.append((str(key), str(value)))
    if len(pairs) > MAX_KEYS:
        notices.append(f"Only the first {MAX_KEYS} keys of the address were read.")
        pairs = pairs[:MAX_KEYS]
    keys = url_keys(config)
    by_key = {k: p for p, k in keys.items()}
    values: dict[str, Any] = {}
    raws: dict[str, str] = {}
    seen: set[str] = set()
    for key, raw in pairs:
        if key in seen:
            continue  # the first value of a repeated key counts, as in session_args
        seen.add(key)
        name = by_key.get(key)
        if name is None:
            if key not in EXTRA_KEYS:
                notices.append(
                    f"Ignored the address key {shorten(key, 80)!r}: it is not a setting; "
                    f"allowed keys: {', '.join([*keys.values(), *EXTRA_KEYS])}."
                )
            continue
        if len(raw) > MAX_VALUE_CHARS:
            notices.append(
                f"Ignored {key}= ({len(raw):,} characters): values are at most "
                f"{MAX_VALUE_CHARS:,} characters."
            )
            continue
        try:
            values[name] = _parse_value(config.param[name], raw)
            raws[name] = raw
        except _Refused as exc:
            notices.append(f"Ignored {key}={shorten(raw, 60)!r}: {exc}.")
    if "algorithms" in values:
        why = _check_algorithms(values, config)
        if why is not None:
            key = keys["algorithms"]
            notices.append(f"Ignored {key}={shorten(raws['algorithms'], 60)!r}: {why}.")
    return values, notices


def apply_query(config: Config, values: Mapping[str, Any]) -> list[str]:
    """Apply checked values to ``config`` in one update; on failure restore it and apply the
    values one at a time.  Returns one notice per value that could still not be applied."""
    changed = {k: v for k, v in values.items() if not _equal(getattr(config, k), v)}
    if not changed:
        return []
    before = {k: getattr(config, k) for k in changed}
    notices: list[str] = []
    try:
        config.update_settings(changed)  # the problem first: it decides the algorithms offered
    except Exception:  # a rule beyond the parameter's own bounds: go key by key
        _restore(config, before)
        order = sorted(changed, key=lambda k: (k != "problem", k != "reward", k == "algorithms"))
        for key in order:
            old = getattr(config, key)
            try:
                config.param.update(**{key: changed[key]})
            except Exception as exc:
                _restore(config, {key: old})
                notices.append(f"Ignored {key}={shorten(changed[key], 60)!r}: {shorten(exc, 200)}")
    # a value the configuration replaced (algorithms of the other problem are swapped for
    # the new problem's default comparison): say so, the link asked for something else
    for key, value in changed.items():
        now = getattr(config, key)
        if not _equal(now, value) and not any(n.startswith(f"Ignored {key}=") for n in notices):
            notices.append(
                f"Ignored {key}={shorten(_text(value), 60)!r}: it does not fit the other "
                f"settings (problem {config.problem}); using {shorten(_text(now), 80)}."
            )
    return notices


def serialize(config: Config) -> dict[str, str]:
    """The configuration as URL values (``None`` values are left out)."""
    out: dict[str, str] = {}
    for name, key in url_keys(config).items():
        value = getattr(config, name)
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, str):
            out[key] = value
        elif isinstance(value, (int, float)):
            out[key] = repr(value) if isinstance(value, float) else str(value)
        else:
            out[key] = json.dumps(value)
    return out


def _text(value: Any) -> str:
    return json.dumps(value) if isinstance(value, (list, dict)) else str(value)


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:
        return False


def _restore(config: Config, values: Mapping[str, Any]) -> None:
    try:
        config.update_settings(values)
    except Exception:  # values that were valid before are valid now: one at a time
        for key, value in values.items():
            try:
                setattr(config, key, value)
            except Exception:
                pass


class UrlSync:
    """Two-way sync of a :class:`Config` with a page's ``pn.state.location``.

    Parameters
    ----------
    config : Config
        The session's configuration.
    location : panel Location
        ``pn.state.location`` of the session.
    on_notices : callable
        ``on_notices(list_of_sentences)`` after each URL applied (an empty list clears).
    """

    def __init__(
        self, config: Config, location: Any, on_notices: Callable[[list[str]], None]
    ) -> None:
        self.config = config
        self.location = location
        self.on_notices = on_notices
        self._writing = False
        self._watchers = [
            location.param.watch(self._on_search, ["search"]),
            config.param.watch(self._on_config, list(url_keys(config))),
        ]
        self.apply(location.search or "")

    def apply(self, search: str) -> list[str]:
        """Apply a query string (``?...``) and write the values used back to the URL."""
        values, notices = parse_query(search, self.config)
        notices += apply_query(self.config, values)
        self.on_notices(notices)
        self.write()
        return notices

    def write(self) -> None:
        """Put the configuration's values into the URL (other keys are kept as they are)."""
        pairs = [(k, v) for k, v in split_query(self.location.search or "") if k not in _keys(self)]
        search = "?" + urlencode(pairs + list(serialize(self.config).items()))
        if search != self.location.search:
            self._writing = True
            try:
                self.location.search = search
            finally:
                self._writing = False

    def close(self) -> None:
        """Stop syncing (the session ended)."""
        self.location.param.unwatch(self._watchers[0])
        self.config.param.unwatch(self._watchers[1])

    def _on_search(self, event: Any) -> None:
        if not self._writing:
            self.apply(event.new or "")

    def _on_config(self, *_: Any) -> None:
        self.write()


def _keys(sync: UrlSync) -> set[str]:
    return set(url_keys(sync.config).values())
