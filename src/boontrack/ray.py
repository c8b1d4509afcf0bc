"""``boontrack.ray``: the Ray Tune integration (``boontrack_ray``) under a short name, loaded on first use.

    from boontrack.ray import BoonCallback
    tuner = tune.Tuner(train, param_space=..., run_config=tune.RunConfig(callbacks=[BoonCallback(val="val_acc")]))

Importing this module imports neither the integration nor ray (``pip install ".[ray]"``); the callback
class, a subclass of ``ray.tune.Callback``, is created when it is first asked for.
"""

from __future__ import annotations

from boontrack._lazy import lazy_exports

__all__ = ["BoonCallback"]

__getattr__, __dir__ = lazy_exports(globals(), dict.fromkeys(__all__, "boontrack_ray._callback"))
