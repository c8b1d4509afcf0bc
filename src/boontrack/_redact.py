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

__all__ = ["MASK", "SECRET_VARIABLES", "redact"]

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

_SECRET_NAME = r"[\w.-]*(?:passw(?:or)?d|pwd|secret|token|auth|credential|api[_.-]?key|[_.-]key\b)[\w.-]*"
_URL_USERINFO = re.compile(r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)\S*@")
_HTTP_CREDENTIALS = re.compile(r"\b(?P<scheme>basic|bearer)(?P<space>\s+)[A-Za-z0-9+/=._~-]+", re.IGNORECASE)
_KEY_VALUE = re.compile(
    rf"""(?<![\w.-])(?P<key>(?P<q>['"]?){_SECRET_NAME}(?P=q)\s*[:=]\s*(?:(?:basic|bearer)\s+)?)
        (?:"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|[^\s,;&)}}\]>]+)""",
    re.IGNORECASE | re.VERBOSE,
)
_KEY_SHAPED = re.compile(r"(?<![\w-])[\w-]{40,}(?![\w-])")
_RANDOM_PART = re.compile(r"[0-9a-fA-F]{32}|(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{16,}")
_JSON_WEB_TOKEN = re.compile(r"\beyJ[\w-]*\.[\w-]+\.[\w-]*")
_SECRET_VARIABLE_NAME = re.compile(_SECRET_NAME, re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with every credential it holds replaced by ``***`` (see the module docstring for what is masked)."""
    for secret in _environment_secrets():
        text = text.replace(secret, MASK)
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _HTTP_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['space']}{MASK}", text)
    text = _KEY_VALUE.sub(_mask_value, text)
    text = _KEY_SHAPED.sub(lambda m: MASK if _RANDOM_PART.search(m[0]) else m[0], text)
    return _JSON_WEB_TOKEN.sub(MASK, text)


def _mask_value(match: re.Match[str]) -> str:
    value = match[0][len(match["key"]) :]
    quote = value[0] if value[0] in "'\"" else ""
    return f"{match['key']}{quote}{MASK}{quote}"


def _environment_secrets() -> list[str]:
    """Values of secret environment variables, longest first (so that no part of a longer one survives)."""
    secrets = {os.environ.get(name, "") for name in SECRET_VARIABLES}
    secrets = {value for value in secrets if len(value) >= 3}
    secrets |= {
        value
        for name, value in os.environ.items()
        if len(value) >= _MIN_OTHER_SECRET and _SECRET_VARIABLE_NAME.fullmatch(name)
    }
    return sorted(secrets, key=len, reverse=True)
