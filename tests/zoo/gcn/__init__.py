# ruff: noqa  (the model zoo's text as it is)
"""GCN as MindSpore's model zoo writes it: the files of mindspore-ai/models official/gnn/GCN (Apache-2.0) with
``mindspore`` replaced by ``opforge`` in the imports and ``src.``/``model_utils.`` by ``zoo.gcn.`` (license
headers dropped). gcn.py, metrics.py, dataset.py (``GraphData`` reading the graph converter's MindRecord files),
config.py and eval_callback.py are src/'s files unchanged; train.py is train.py without the ModelArts wrapper
(``run_train``, the CPU/Ascend branch, and ``run_gpu_train``); model_config.py holds default_config.yaml's
values. ``tests/test_zoo_gnn.py`` runs them on a small Cora-like graph written by the zoo's converter
(tests/zoo/graph_to_mindrecord)."""
