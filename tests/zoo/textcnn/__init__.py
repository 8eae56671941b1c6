# ruff: noqa  (the model zoo's text as it is)
"""TextCNN as MindSpore's model zoo writes it: the files of mindspore-ai/models research/nlp/textcnn (Apache-2.0)
with ``mindspore`` replaced by ``opforge`` in the imports and ``src.``/``model_utils.`` by ``zoo.textcnn.``
(license headers dropped). textcnn.py and dataset.py are src/textcnn.py and src/dataset.py unchanged except
that dataset.py imports pandas only where it is installed (SST2's .tsv reader needs it; MovieReview, which the
tests use, does not); train.py and eval.py are train.py's ``train_net`` and eval.py's ``eval_net`` without the
ModelArts wrapper; config.py holds mr_config_cpu.yaml's values, shrunk. ``tests/test_zoo_textcnn.py`` runs them.
export.py is the zoo's export.py with model_utils/moxing_adapter.py (moxing_adapter.py),
run by ``tests/test_zoo_export.py``."""
