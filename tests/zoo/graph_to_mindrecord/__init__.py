# ruff: noqa  (the model zoo's text as it is)
"""The model zoo's graph converter: the files of mindspore-ai/models utils/graph_to_mindrecord (Apache-2.0) with
``mindspore`` replaced by ``opforge`` in the imports (license headers dropped). writer.py and graph_map_schema.py
are unchanged otherwise; cora/mr_api.py reads the Planetoid files of Cora (``ind.cora.*``) and differs in one
line: ``features.toarray()`` for ``features.A``, which SciPy 1.14 removed from its sparse matrices. writer.py is a
script (``python writer.py --mindrecord_script cora ...``, run from this folder, as write_cora.sh does):
``tests/test_zoo_gnn.py`` runs it with ``runpy`` to write the graph files that the GNN programs read with
``GraphData``."""
