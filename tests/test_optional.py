"""Optional dependencies: a missing extra is one clear error that says what to install."""

from __future__ import annotations

import pytest

from boontrack._optional import import_optional
from boontrack.exceptions import InputError, MissingExtraError


def test_present_module_is_returned():
    assert import_optional("json", extra="plots", needed_for="x").dumps([1]) == "[1]"


def test_missing_module_names_the_extra_and_is_both_an_import_and_an_input_error():
    with pytest.raises(
        MissingExtraError,
        match=r'^drawing plots needs nonexistent_pkg: pip install "\.\[plots\]" in a boontrack checkout$',
    ) as info:
        import_optional("nonexistent_pkg.figure", extra="plots", needed_for="drawing plots")
    # ImportError for library callers; InputError so that the command line prints one line and exits 2
    assert isinstance(info.value, ImportError) and isinstance(info.value, InputError)


def test_a_third_party_extra_names_its_distribution_not_a_boontrack_checkout():
    with pytest.raises(
        MissingExtraError,
        match=r'^the Ledger backend needs nonexistent_sdk: pip install "boontrack-ledger\[ledger\]"$',
    ):
        import_optional(
            "nonexistent_sdk.client", extra="ledger", needed_for="the Ledger backend", distribution="boontrack-ledger"
        )
