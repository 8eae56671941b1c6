"""The pip package easydict's ``EasyDict``, the part config.py uses: a dict whose keys (nested dicts too)
read as attributes."""


class EasyDict(dict):
    def __init__(self, d=None, **kwargs):
        super().__init__()
        for k, v in {**(d or {}), **kwargs}.items():
            setattr(self, k, v)

    def __setattr__(self, name, value):
        value = EasyDict(value) if isinstance(value, dict) and not isinstance(value, EasyDict) else value
        super().__setattr__(name, value)
        super().__setitem__(name, value)

    __setitem__ = __setattr__
