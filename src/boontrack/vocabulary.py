"""The one vocabulary: what every option is called in Python, the config file, Hydra and on the command line.

Python (the :class:`~boontrack.spec.Spec`, the callbacks and the ``summarize_*`` functions), a ``[[jobs]]`` table
of the config file and a Hydra callback's keys all use the same names (``n_resamples``, ``confidence_level``,
``maximize``, ``seed_column``, ``tracking_uri``, ...). The command line keeps short flags, mapped to those names
by :data:`FLAGS`, the one table that the command line, the config loader and the README's option table read
(:data:`COMPARE_FLAGS` adds the keywords of ``boontrack compare``, :data:`SIMULATE_FLAGS` those of
``boontrack simulate``).

Messages name an option as the caller typed it, with no rewriting of the text afterwards: a front end says
which vocabulary its caller speaks (:func:`speaking`) for the duration of a call, and every message that names
an option asks :func:`name` or :func:`setting` how to write it. Python callers see ```n_resamples``` and
```maximize=False```, a config file ```maximize = false```, a Hydra config ```maximize: false``` and the
command line ``--resamples`` and ``--minimize``. Spellings of earlier releases (:data:`DEPRECATED`) are still
accepted for one release, with a :class:`DeprecationWarning`, and named as typed in messages.

This module imports nothing beyond the standard library: the command line reads it at start-up.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from boontrack.exceptions import InputError

__all__ = [
    "CLI",
    "COMPARE_FLAGS",
    "SIMULATE_FLAGS",
    "CONFIG",
    "DEPRECATED",
    "FLAGS",
    "HYDRA",
    "PYTHON",
    "Vocabulary",
    "modernize",
    "name",
    "setting",
    "speaking",
]

#: The command line's flag of each option (Python / config / Hydra name -> flag). A boolean with two flags
#: is written ``--on/--off``.
FLAGS: Mapping[str, str] = {
    # what to compute (the fields of Spec)
    "val": "--val",
    "test": "--test",
    "n": "--n",
    "estimator": "--estimator",
    "maximize": "--maximize/--minimize",
    "group_by": "--group-by",
    "seed_column": "--seed-column",
    "duration": "--duration",
    "baseline": "--baseline",
    "compare": "--compare",
    "correction": "--correction",
    "confidence_level": "--confidence",
    "n_resamples": "--resamples",
    "ci_method": "--ci-method",
    "bounds": "--bounds",
    "seed": "--seed",
    "pick": "--pick",
    "curves": "--curves",
    "task_column": "--task-column",
    "normalize": "--normalize",
    "normalize_with": "--normalize-with",
    # where the summary goes
    "out": "--out",
    "write_back": "--write-back",
    "plots": "--plots/--no-plots",
    "prefix": "--prefix",
    # where the runs come from
    "tracking_uri": "--tracking-uri",
    "parent": "--parent",
    "sweep": "--sweep",
    "group": "--group",
    "study": "--study",
    "options": "--option",
}

#: The flags of ``boontrack compare``'s own keywords (those of :func:`boontrack.sources.compare_sources` beside
#: the spec's, which keep their :data:`FLAGS`); ``options`` there is one mapping per source.
COMPARE_FLAGS: Mapping[str, str] = {
    "labels": "--label",
    "options": "--source-option",
    "require": "--require",
    "margin": "--margin",
    "gate_on": "--gate-on",
    "write_to": "--write-to",
    "write_options": "--write-option",
}

#: The flags of ``boontrack simulate``'s own keywords: the population's, and the parameters of
#: :func:`boontrack.simulate.study` under their names there. The runs of a SOURCE are chosen with the
#: :data:`FLAGS` of ``summarize`` (``--val``, ``--tracking-uri``, ...).
SIMULATE_FLAGS: Mapping[str, str] = {
    "population": "--population",
    "fit_group": "--fit-group",
    "m": "--m",
    "methods": "--ci-method",
    "width": "--width",
    "shift": "--shift",
    "power": "--power",
    "replications": "--replications",
    "n_resamples": "--resamples",
    "rng": "--seed",
    "no_plots": "--no-plots",
}


def _same(value: Any) -> Any:
    return value


def _opposite(value: Any) -> Any:
    # A value that is not a boolean stays as it is, so that the check reports it (``not "yes"`` would be False).
    return not value if isinstance(value, bool) else value


@dataclass(frozen=True)
class Deprecated:
    """An earlier spelling of an option: its current name, and how a value converts."""

    new: str
    convert: Callable[[Any], Any] = _same
    #: The release that stops accepting it.
    until: str = "0.4.0"


#: Spellings of 0.2.0 (the command line's words in the config file and Hydra, Ray's and Hydra's MLflow URI),
#: accepted for one release with a DeprecationWarning: old keyword -> its current name.
DEPRECATED: Mapping[str, Deprecated] = {
    "minimize": Deprecated("maximize", _opposite),
    "confidence": Deprecated("confidence_level"),
    "resamples": Deprecated("n_resamples"),
    "bootstrap_seed": Deprecated("seed"),
    "seed_key": Deprecated("seed_column"),
    "mlflow_tracking_uri": Deprecated("tracking_uri"),
}


@dataclass(frozen=True)
class Vocabulary:
    """How one kind of caller writes option names and settings.

    ``style`` is ``"python"`` (```maximize=False```), ``"toml"`` (```maximize = false```), ``"yaml"``
    (```maximize: false```) or ``"flags"`` (``--minimize``). ``typed`` maps an option to the earlier spelling
    the caller used for it, so that a message names it as typed.
    """

    style: str
    typed: Mapping[str, str] = field(default_factory=dict)
    #: A command's flags (style ``"flags"``): the options of ``boontrack summarize`` unless a command says others.
    flags: Mapping[str, str] = field(default_factory=lambda: FLAGS)

    def name(self, option: str) -> str:
        """``option`` as this caller writes it."""
        if option in self.typed:
            return self._word(self.typed[option])
        if self.style == "flags" and option in self.flags:
            return self.flags[option]
        return self._word(option)

    def setting(self, option: str, value: Any) -> str:
        """``option`` set to ``value`` as this caller writes it (``--minimize`` for ``maximize`` False)."""
        typed = self.typed.get(option)
        if typed is not None and typed in DEPRECATED:
            value = DEPRECATED[typed].convert(value)  # the old option's own value (minimize: the opposite)
        if self.style == "flags":
            if option not in self.flags:
                return f"{self._word(option)}={value}"
            on, _, off = self.flags[option].partition("/")
            if off and isinstance(value, bool):
                return on if value else off
            return f"{self.flags[option]} {value}"
        key = typed or option
        if self.style == "python":
            return f"`{key}={value!r}`"
        literal = str(value).lower() if isinstance(value, bool) else repr(value)
        return f"`{key} = {literal}`" if self.style == "toml" else f"`{key}: {literal}`"

    def knowing(self, typed: Mapping[str, str]) -> Vocabulary:
        """This vocabulary, naming the options in ``typed`` (current name -> spelling used) as typed."""
        return Vocabulary(self.style, {**self.typed, **typed}, self.flags)

    def _word(self, option: str) -> str:
        # On the command line, an option without a flag of its own is a backend's: ``--option KEY=VALUE``.
        return f"--option {option.replace('_', '-')}" if self.style == "flags" else f"`{option}`"


PYTHON = Vocabulary("python")
CONFIG = Vocabulary("toml")
HYDRA = Vocabulary("yaml")
CLI = Vocabulary("flags")

_SPOKEN: contextvars.ContextVar[Vocabulary] = contextvars.ContextVar("boontrack_vocabulary", default=PYTHON)


@contextlib.contextmanager
def speaking(vocabulary: Vocabulary) -> Iterator[Vocabulary]:
    """Within the block, messages name options as ``vocabulary`` writes them."""
    token = _SPOKEN.set(vocabulary)
    try:
        yield vocabulary
    finally:
        _SPOKEN.reset(token)


def name(option: str) -> str:
    """``option`` as the current caller writes it (```n_resamples```, ``--resamples``, ...)."""
    return _SPOKEN.get().name(option)


def setting(option: str, value: Any) -> str:
    """``option`` set to ``value`` as the current caller writes it (```maximize=False```, ``--minimize``)."""
    return _SPOKEN.get().setting(option, value)


def modernize(keywords: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None) -> tuple[dict, dict]:
    """``keywords`` with every earlier spelling (:data:`DEPRECATED`) under its current name and value, and the
    map of current names to the spellings used (for :meth:`Vocabulary.knowing`).

    Each earlier spelling warns (:class:`DeprecationWarning`). An option given under both names is an
    :class:`~boontrack.exceptions.InputError` naming both, except where the current name holds its default
    (``defaults``: the caller's own defaults, for keywords that always arrive).
    """
    modern: dict[str, Any] = {}
    typed: dict[str, str] = {}
    for key, value in keywords.items():
        if key not in DEPRECATED:
            modern.setdefault(key, value)
            continue
        old = DEPRECATED[key]
        current = keywords.get(old.new, (defaults or {}).get(old.new))
        if old.new in keywords and current != (defaults or {}).get(old.new, object()):
            raise InputError(f"give `{old.new}` or its former name `{key}`, not both")
        warnings.warn(
            f"`{key}` is now `{old.new}`; the old name is accepted until boontrack {old.until}",
            DeprecationWarning,
            stacklevel=3,
        )
        modern[old.new] = old.convert(value)
        typed[old.new] = key
    return modern, typed
