"""MindSpore's ``mindspore._extends``: the one name model zoo code imports from it, ``cell_attr_register``
(the GAT of research/gnn/gat decorates its ``GNNFeatureTransform.__init__`` with it)."""

from opforge._extends.utils import cell_attr_register

__all__ = ["cell_attr_register"]
