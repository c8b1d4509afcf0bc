"""Credentials never reach a message: every error, warning, log line and location boontrack shows passes here.

:func:`redact` works on the structure of what it masks, not on one pattern for a whole secret:

- **URLs**: the user information of ``scheme://user:password@host`` is everything before the *last* ``@`` of
  the URL (a password may itself hold ``@``, ``:`` or ``/``): ``http://alice:pw@x@host`` -> ``http://***@host``.
- **Secret keys**: the value of every key whose name looks secret (``password``, ``passwd``, ``pwd``,
  ``secret``, ``token``, ``auth...``, ``credential``, ``api_key``, ``*_key``, ...; any case, any of ``_ - .``)
  after ``=`` or ``:``, quoted (``'...'``, ``"..."``, escapes included) or bare (up to a space, ``,``, ``;``,
  ``&`` or a closing bracket): ``{'api_key': 'abc'}``, ``api_key = "abc"``, ``?token=abc&``, ``X-Api-Key: abc``.
- **HTTP credentials**: the credentials after ``Basic`` and ``Bearer`` (``Authorization: Basic dTpw``).
- **Key shapes**: W&B API keys (a run of 40 or more letters, digits, ``_`` and ``-`` holding 32 hex digits
  or 16 letters and digits with a digit among them; such keys may come from ``~/.netrc``, not only the
  environment) and JSON web tokens (``eyJ...``).
- **Environment**: the values of :data:`SECRET_VARIABLES` and of every environment variable whose name looks
  secret (values of 8 characters or more), wherever they appear.

Masking errs on the side of hiding: a long identifier or a word after ``token:`` may be masked too.
"""

from __future__ import annotations

import os
import re

__all__ = ["MASK", "SECRET_VARIABLES", "describe_error", "redact"]

MASK = "***"
#: Environment variables whose values are secrets (tracker passwords, tokens and API keys), masked from 3
#: characters on.
SECRET_VARIABLES = (
    "MLFLOW_TRACKING_PASSWORD",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_USERNAME",
    "DATABRICKS_TOKEN",
    "WANDB_API_KEY",
)
#: Other environment variables with a secret-looking name are masked from this length on (shorter values,
#: such as flags, would blank out ordinary words).
_MIN_OTHER_SECRET = 8
#: Variables whose names look secret but hold none: the shell's working directories (``PWD`` is not a password).
_NOT_SECRET_VARIABLES = frozenset({"PWD", "OLDPWD"})

# Every pattern runs in linear time on any text: no unbounded repetition that could be retried from many places.
_SECRET_WORD = r"passw(?:or)?d|pwd|secret|token|auth|credential|api[_.-]?key|[_.-]key\b"
_SECRET_NAME = re.compile(_SECRET_WORD, re.IGNORECASE)
_URL = re.compile(r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,30}://)(?P<rest>\S*)")
_HTTP_CREDENTIALS = re.compile(r"\b(?P<scheme>basic|bearer)(?P<space>\s+)[A-Za-z0-9+/=._~-]+", re.IGNORECASE)
#: From the secret word of a key name (the rest of the name is kept as it is) to the end of its value.
_KEY_VALUE = re.compile(
    rf"""(?P<key>(?:{_SECRET_WORD})[\w.-]{{0,40}}['"]?[ \t]{{0,40}}[:=][ \t]{{0,40}}(?:(?:basic|bearer)\s+)?)
        (?P<value>"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|[^\s,;&)}}\]>]+)""",
    re.IGNORECASE | re.VERBOSE,
)
_KEY_SHAPED = re.compile(r"(?<![\w-])[\w-]{40,}(?![\w-])")
_HEX_PART = re.compile(r"[0-9a-fA-F]{32}")
_ALPHANUMERIC_PART = re.compile(r"[A-Za-z0-9]{16,}")
_JSON_WEB_TOKEN = re.compile(r"\beyJ[\w-]*\.[\w-]+\.[\w-]*")


def redact(text: str) -> str:
    """``text`` with every credential it holds replaced by ``***`` (see the module docstring for what is masked)."""
    for secret in _environment_secrets():
        text = text.replace(secret, MASK)
    text = _URL.sub(_mask_userinfo, text)
    text = _HTTP_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['space']}{MASK}", text)
    text = _KEY_VALUE.sub(_mask_value, text)
    text = _KEY_SHAPED.sub(lambda m: MASK if _looks_random(m[0]) else m[0], text)
    return _JSON_WEB_TOKEN.sub(MASK, text)


def describe_error(exc: BaseException) -> str:
    """One line naming the error and what it says, without credentials."""
    text = " ".join(str(exc).split())
    return redact(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def _looks_random(word: str) -> bool:
    """32 hex digits, or 16 letters and digits with a digit among them (linear time, whatever ``word`` is)."""
    if _HEX_PART.search(word):
        return True
    return any(any(c.isdigit() for c in part) for part in _ALPHANUMERIC_PART.findall(word))


def _mask_userinfo(match: re.Match[str]) -> str:
    """``scheme://***@host...``: the user information is everything before the last ``@`` of the URL."""
    _, at, host = match["rest"].rpartition("@")
    return f"{match['scheme']}{MASK}@{host}" if at else match[0]


def _mask_value(match: re.Match[str]) -> str:
    quote = match["value"][0] if match["value"][0] in "'\"" else ""
    return f"{match['key']}{quote}{MASK}{quote}"


def _environment_secrets() -> list[str]:
    """Values of secret environment variables, longest first (so that no part of a longer one survives)."""
    secrets = {os.environ.get(name, "") for name in SECRET_VARIABLES}
    secrets = {value for value in secrets if len(value) >= 3}
    secrets |= {
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_OTHER_SECRET and _SECRET_NAME.search(name) and name not in _NOT_SECRET_VARIABLES
    }
    return sorted(secrets, key=len, reverse=True)
