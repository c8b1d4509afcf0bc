"""``boontrack.hydra``: the Hydra integration (``boontrack_hydra``) under a short name, loaded on first use.

    hydra:
      callbacks:
        boontrack:
          _target_: boontrack.hydra.BoonCallback
          val: val_acc
          test: test_acc

Importing this module imports neither the integration nor Hydra; the callback class, a subclass of Hydra's
``Callback``, is created when the name is first asked for (``pip install ".[hydra]"``).
"""

from __future__ import annotations

from boontrack._lazy import lazy_exports

__all__ = ["BoonCallback"]

__getattr__, __dir__ = lazy_exports(globals(), {"BoonCallback": "boontrack_hydra.callback"})
