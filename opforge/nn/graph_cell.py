"""MindSpore's ``nn.GraphCell``: a loaded graph (``opforge.load``) run as a Cell."""

from __future__ import annotations

from opforge.dispatch import sharding
from opforge.ir.graph import Graph
from opforge.jit import jit
from opforge.nn.cell import Cell
from opforge.tensor import Parameter, Tensor

__all__ = ["GraphCell"]


class GraphCell(Cell):
    """Runs ``graph`` (what ``load`` returns) on inputs of the shapes it was exported with, replayed
    as an ``opforge.jit`` trace after the first call.
    ``params_init``: name -> Parameter or Tensor replacing the values of the graph's weights (e.g. the
    weights of a newer checkpoint). The graph's weights are this cell's parameters, by their names."""

    def __init__(self, graph, params_init=None, obf_random_seed=None):
        super().__init__()
        if not isinstance(graph, Graph):
            raise TypeError(f"For 'GraphCell', the 'graph' must be what load returns, but got {type(graph).__name__}.")
        if obf_random_seed is not None:
            raise NotImplementedError(
                "For 'GraphCell', opforge does not obfuscate graphs: leave 'obf_random_seed' None."
            )
        self.graph = graph
        for name, p in graph.params.items():
            self.insert_param_to_cell(name, p, check_name_contain_dot=False)
        for name, value in (params_init or {}).items():
            self._init_param(name, value)
        # replayed as a trace, as MindSpore runs a loaded graph compiled (under a tape it runs call by call)
        self._replay = jit(self._run)

    def _init_param(self, name: str, value) -> None:
        if name not in self.graph.params:
            raise ValueError(f"For 'GraphCell', 'params_init' names '{name}', which is not a weight of the graph.")
        if not isinstance(value, Tensor):
            raise TypeError(
                f"For 'GraphCell', 'params_init[{name!r}]' must be a Parameter or Tensor, but got "
                f"{type(value).__name__}."
            )
        target = self.graph.params[name]
        if tuple(value.shape) != tuple(target.shape) or value.dtype != target.dtype:
            raise ValueError(
                f"For 'GraphCell', 'params_init[{name!r}]' must have shape {tuple(target.shape)} and dtype "
                f"{target.dtype}, but got shape {tuple(value.shape)} and dtype {value.dtype}."
            )
        target.set_data(value if not isinstance(value, Parameter) else Tensor(value.asnumpy()))

    def __call__(self, *inputs, **kwargs):
        # A loaded graph is a fixed program (a parallel network's export: one rank's local program, its blocks and
        # collectives in it, no strategies): it runs as recorded, never as a parallel network's outermost call.
        with sharding.inner_calls():
            return super().__call__(*inputs, **kwargs)

    def construct(self, *inputs):
        return self._replay(*inputs)

    def _run(self, *inputs):
        return self.graph.run(list(inputs), self._params)
