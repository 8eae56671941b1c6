# ruff: noqa  (the model zoo's text as it is)
"""GAT as MindSpore's model zoo writes it: the files of mindspore-ai/models research/gnn/gat (Apache-2.0) with
``mindspore`` replaced by ``opforge`` in the imports and ``src.`` by ``zoo.gat.`` (license headers dropped).
gat.py (with ``mindspore._extends.cell_attr_register``), utils.py and dataset.py (``GraphData`` reading the
graph converter's MindRecord files) are src/'s files unchanged; train.py is train.py's ``gnn_train`` without
the ModelArts wrapper; model_config.py holds default_config.yaml's values. ``tests/test_zoo_gnn.py`` runs it
on the small Cora-like graph it writes with the zoo's converter (tests/zoo/graph_to_mindrecord)."""
