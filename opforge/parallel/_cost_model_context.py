"""MindSpore's module path ``mindspore.parallel._cost_model_context``, which the zoo's Wide&Deep and PanGu-alpha
import ``_set_multi_subgraphs`` from: a hint to MindSpore's strategy search that the graph holds several
subgraphs. opforge's search (docs/parallel.md) records every forward call of the network as one graph
whatever its subgraphs, so the hint is recorded and read back."""

from __future__ import annotations

__all__ = ["_set_multi_subgraphs", "_get_multi_subgraphs"]

_state = {"multi_subgraphs": False}


def _set_multi_subgraphs(multi_subgraph=True) -> None:
    if not isinstance(multi_subgraph, bool):
        raise TypeError(f"For '_set_multi_subgraphs', the 'multi_subgraph' must be a bool, got {multi_subgraph!r}.")
    _state["multi_subgraphs"] = multi_subgraph


def _get_multi_subgraphs() -> bool:
    return _state["multi_subgraphs"]
