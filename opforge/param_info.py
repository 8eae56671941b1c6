"""``ParamInfo``: the record of a Parameter's own settings (MindSpore's ``Parameter.param_info``).

A Parameter keeps its ``name``, ``requires_grad``, ``layerwise_parallel``, ``parallel_optimizer`` and
``comm_fusion`` in a ParamInfo and reads them from it, as MindSpore's does: a Parameter given another's
``param_info.clone()`` takes that one's settings (the zoo's PanGu-alpha makes its optimizer's float32 states
so: ``state.param_info = weight.param_info.clone()``, then renames the state), and one given the same ParamInfo
object shares them. A ParamInfo takes further attributes (PanGu-alpha records ``cloned_obj`` on its weights');
``clone()`` copies the settings only, as MindSpore's does, and remembers the ParamInfo it was cloned from (a
parallel run lays a clone out as its source).
"""

from __future__ import annotations

__all__ = ["ParamInfo"]

_FIELDS = ("name", "requires_grad", "layerwise_parallel", "parallel_optimizer", "comm_fusion")


class ParamInfo:
    """MindSpore's defaults: ``name`` "" (a Parameter sets its own), ``requires_grad`` True,
    ``layerwise_parallel`` False, ``parallel_optimizer`` True, ``comm_fusion`` 1."""

    def __init__(self):
        self.name = ""
        self.requires_grad = True
        self.layerwise_parallel = False
        self.parallel_optimizer = True
        self.comm_fusion = 1
        self.cloned_from = None  # the ParamInfo this one was cloned from (see clone)

    def clone(self) -> ParamInfo:
        """A new ParamInfo with these settings (not the attributes added to this one), remembering it was
        cloned from this one: MindSpore lays a cloned Parameter (an optimizer state made by ``clone``) out as
        the Parameter it was cloned from (its ParamInfo's cloned index), and so does opforge's parallel run."""
        info = ParamInfo()
        for field in _FIELDS:
            setattr(info, field, getattr(self, field))
        info.cloned_from = self
        return info

    def __repr__(self) -> str:
        return "ParamInfo(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"
