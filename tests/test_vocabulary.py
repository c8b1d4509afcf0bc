"""The one vocabulary: the options table of the docs (docs/guide/files.md) is boontrack.vocabulary's, and each
caller reads its own words."""

from __future__ import annotations

import pytest

from boontrack import vocabulary
from boontrack.exceptions import InputError
from boontrack.vocabulary import CLI, COMPARE_FLAGS, CONFIG, DEPRECATED, FLAGS, HYDRA, PYTHON, modernize

from readme_tables import quoted, tables_after


def test_the_readme_options_table_is_the_one_table():
    (rows,) = tables_after("options table:")
    flags, old = {}, {}
    for names_cell, flags_cell, old_cell in rows:
        names = quoted(names_cell)
        spelled = [flag.replace(" / ", "/").split(" ")[0] for flag in flags_cell.replace("`", "").split(", ")]
        assert len(names) == len(spelled), names_cell
        flags.update(zip(names, spelled))
        old.update({spelling: names[0] for spelling in quoted(old_cell)})
    assert flags == dict(FLAGS)
    assert old == {spelling: deprecated.new for spelling, deprecated in DEPRECATED.items()}


def test_the_compare_options_table_is_the_table_of_compares_own_flags():
    (rows,) = tables_after("compare keywords:")
    typed = {quoted(names)[0]: quoted(flags)[0].split(" ")[0] for names, flags, _ in rows}
    assert {name: flag for name, flag in typed.items() if flag.startswith("--")} == dict(COMPARE_FLAGS)
    assert typed["sources"] == "SOURCE_A"  # the arguments


@pytest.mark.parametrize(
    ("spoken", "name", "setting"),
    [
        (PYTHON, "`n_resamples`", "`maximize=False`"),
        (CONFIG, "`n_resamples`", "`maximize = false`"),
        (HYDRA, "`n_resamples`", "`maximize: false`"),
        (CLI, "--resamples", "--minimize"),
    ],
)
def test_each_caller_reads_its_own_words(spoken, name, setting):
    with vocabulary.speaking(spoken):
        assert (vocabulary.name("n_resamples"), vocabulary.setting("maximize", False)) == (name, setting)
    assert vocabulary.name("n_resamples") == "`n_resamples`"  # the block's vocabulary ends with it


def test_a_backends_own_option_on_the_command_line_is_an_option_pair():
    with vocabulary.speaking(CLI):
        assert vocabulary.name("read_path") == "--option read-path"
        assert vocabulary.setting("pick", "last") == "--pick last"
        assert vocabulary.setting("plots", False) == "--no-plots"


def test_an_earlier_spelling_is_named_as_typed_with_its_own_value():
    with pytest.warns(DeprecationWarning, match="^`minimize` is now `maximize`; the old name is accepted until"):
        modern, typed = modernize({"minimize": True, "val": "v"})
    assert (modern, typed) == ({"maximize": False, "val": "v"}, {"maximize": "minimize"})
    spoken = CONFIG.knowing(typed)
    assert (spoken.name("maximize"), spoken.setting("maximize", False)) == ("`minimize`", "`minimize = true`")


def test_a_keyword_under_both_names_is_refused_unless_the_new_one_holds_its_default():
    with pytest.raises(InputError, match="give `tracking_uri` or its former name `mlflow_tracking_uri`, not both"):
        modernize({"tracking_uri": "a", "mlflow_tracking_uri": "b"})
    with pytest.warns(DeprecationWarning):
        modern, _ = modernize({"tracking_uri": None, "mlflow_tracking_uri": "b"}, defaults={"tracking_uri": None})
    assert modern == {"tracking_uri": "b"}
