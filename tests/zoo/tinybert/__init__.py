# ruff: noqa  (the model zoo's text as it is)
"""TinyBERT as MindSpore's model zoo writes it: the files of mindspore-ai/models research/nlp/tinybert (Apache-2.0)
with ``mindspore`` replaced by ``opforge`` in the imports and ``src.``/``model_utils.`` by ``zoo.tinybert.``
(license headers dropped). tinybert_model.py, tinybert_for_gd_td.py, utils.py, dataset.py and assessment_method.py
are src/'s files unchanged; general_distill.py is run_general_distill.py without its ModelArts wrapper;
config.py holds gd_config.yaml's values as model_utils/config.py turns them, shrunk.
``tests/test_zoo_tinybert.py`` runs them.
export.py is the zoo's export.py with src/model_utils/moxing_adapter.py (moxing_adapter.py),
run by ``tests/test_zoo_export.py``."""
