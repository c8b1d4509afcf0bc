"""No secret survives redaction, whatever it holds and whichever shape carries it (hypothesis)."""

from __future__ import annotations

import base64
import json
import os
import re
import string
from unittest import mock
from urllib.parse import quote

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from boontrack._redact import redact

#: Secrets of any printable characters (a password may hold @, :, /, quotes and backslashes).
secrets = st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=0x2FF), min_size=6, max_size=40)
#: Secrets that need no quoting (a bare value ends at a space, "," ";" "&" or a closing bracket).
bare_secrets = st.text(
    alphabet=st.characters(min_codepoint=33, max_codepoint=126, blacklist_characters=",;&)}]>'\""),
    min_size=6,
    max_size=40,
)
secret_keys = st.sampled_from(
    [
        "api_key",
        "password",
        "MLFLOW_TRACKING_TOKEN",
        "client_secret",
        "X-Api-Key",
        "db.passwd",
        "accessToken",
        "Authorization",
        "aws_secret_access_key",
        "WANDB_API_KEY",
        "credentials",
        "pwd",
    ]
)


def _assert_hidden(secret: str, message: str) -> None:
    # The secret does not also stand in the message as an ordinary part of it (a password "http:/" in a URL that
    # starts with "http://"); occurrences are counted overlapping. (A shape that escapes the secret, such as a
    # Python repr of a quote, leaves none to find.)
    assume(len(re.findall(f"(?={re.escape(secret)})", message)) <= 1)
    assert secret not in redact(message)


@given(user=st.text(string.ascii_letters, min_size=1, max_size=8), password=secrets)
def test_a_password_in_a_url_is_hidden_whatever_it_holds(user, password):
    assume(not any(c.isspace() for c in password))  # a URL ends at white space
    for shown in (password, quote(password, safe="")):
        message = f"MLflow at http://{user}:{shown}@127.0.0.1:5000/api failed"
        _assert_hidden(shown, message)
        assert redact(message).endswith("http://***@127.0.0.1:5000/api failed")


def test_the_example_of_a_password_with_an_at_sign():
    assert (
        redact("at http://alice:pw@x@127.0.0.1:5000 (is it running?)")
        == "at http://***@127.0.0.1:5000 (is it running?)"
    )


@given(key=secret_keys, secret=secrets)
def test_the_value_of_a_secret_key_is_hidden_in_quoted_shapes(key, secret):
    for message in (
        f"'options' must be a table of plain values, got { ({key: secret, 'x': [1]})!r}",  # Python repr
        f"server said {json.dumps({key: secret, 'user': 'bob'})}",  # JSON
        f"options = {{ {key} = {json.dumps(secret)} }}",  # TOML
    ):
        _assert_hidden(secret, message)


@given(key=secret_keys, secret=bare_secrets)
def test_the_value_of_a_secret_key_is_hidden_in_bare_shapes(key, secret):
    for message in (
        f"GET /api/runs?{key}={quote(secret, safe='')}&page=2 failed",
        f"{key}: {secret}\nContent-Type: text/html",  # a header echoed by an error page
        f"--option {key}={secret} is not known",
    ):
        _assert_hidden(quote(secret, safe="") if "?" in message else secret, message)


@given(user=st.text(string.ascii_letters, min_size=1, max_size=8), password=secrets)
def test_basic_credentials_are_hidden(user, password):
    encoded = base64.b64encode(f"{user}:{password}".encode()).decode()
    message = f"<html><p>401: sent Authorization: Basic {encoded}</p></html>"
    _assert_hidden(encoded, message)
    _assert_hidden(encoded, f"proxy rejected basic {encoded}")


@given(token=st.text(string.ascii_letters + string.digits + "-._~+/", min_size=8, max_size=60))
def test_bearer_tokens_are_hidden(token):
    _assert_hidden(token, f"request with header 'Authorization: Bearer {token}' was refused")


@given(
    key=st.one_of(
        st.text("0123456789abcdef", min_size=40, max_size=40),
        st.text("0123456789abcdef", min_size=40, max_size=40).map(lambda k: "local-" + k),
        st.text(string.ascii_letters + string.digits, min_size=40, max_size=64).filter(
            lambda k: any(c.isdigit() for c in k)
        ),
    )
)
def test_api_key_shapes_are_hidden_wherever_they_appear(key):
    _assert_hidden(key, f"W&B rejected the API key ({key} is not valid for entity team)")


@given(
    name=st.sampled_from(["WANDB_API_KEY", "MLFLOW_TRACKING_PASSWORD", "MY_SERVICE_TOKEN"]),
    secret=secrets.filter(lambda s: len(s) >= 8),  # any secret-named variable counts from 8 characters
)
def test_values_of_secret_environment_variables_are_hidden(name, secret):
    with mock.patch.dict(os.environ, {name: secret}):
        _assert_hidden(secret, f"login as {secret} failed")


@pytest.mark.parametrize(
    "message",
    [
        "no column 'nope' (tried 'nope', 'metrics.nope'); available columns: val, test",
        "cannot read /data/cifar10_resnet50_lr_sweep_2024_final_results_v2.csv: no such file",
        "summary run 0123456789abcdef0123456789abcdef in experiment 1 at http://127.0.0.1:5000",
        "no W&B API key configured; set WANDB_API_KEY or run `wandb login`",
    ],
)
def test_ordinary_messages_are_left_as_they_are(message):
    assert redact(message) == message


@pytest.mark.parametrize(
    "text",
    ["token" * 20_000, "x" * 100_000, "a." * 50_000, "h://" * 20_000, "password:" * 20_000, "a=" * 50_000],
)
def test_hostile_text_is_redacted_in_linear_time(text):
    # A pattern that backtracks would take minutes on these 100 000 characters; no clock here.
    assert isinstance(redact(text), str)


def test_the_working_directory_is_not_a_secret(monkeypatch):
    # PWD looks like a secret name ("pwd") but is the shell's working directory, in every path boontrack shows.
    monkeypatch.setenv("PWD", "/home/alice/project")
    monkeypatch.setenv("OLDPWD", "/home/alice/other")
    message = "cannot read /home/alice/project/runs.csv (previously in /home/alice/other)"
    assert redact(message) == message
