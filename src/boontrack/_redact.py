"""Credentials never reach a message: every error, warning and location string boontrack prints passes here."""

from __future__ import annotations

import os
import re

#: Environment variables whose values are secrets (tracker passwords, tokens and API keys).
SECRET_VARIABLES = (
    "MLFLOW_TRACKING_PASSWORD",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_USERNAME",
    "DATABRICKS_TOKEN",
    "WANDB_API_KEY",
)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


def redact(text: str) -> str:
    """``text`` without ``user:password@`` in URLs (``https://u:p@host`` -> ``https://***@host``) and without
    the values of :data:`SECRET_VARIABLES`."""
    text = _URL_CREDENTIALS.sub("***@", text)
    for name in SECRET_VARIABLES:
        secret = os.environ.get(name)
        if secret and len(secret) >= 3:  # shorter values would blank out ordinary words
            text = text.replace(secret, "***")
    return text
