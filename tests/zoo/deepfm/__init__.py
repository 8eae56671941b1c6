# ruff: noqa  (the model zoo's text as it is)
"""DeepFM as MindSpore's model zoo writes it: the files of mindspore-ai/models official/recommend/DeepFM (Apache-2.0)
with ``mindspore`` replaced by ``opforge`` in the imports and ``src.``/``model_utils.`` by ``zoo.deepfm.``
(license headers dropped). deepfm.py, callback.py, dataset.py and preprocess_data.py are src/'s files unchanged
except that dataset.py imports pandas only where it is installed (the H5 format's reader needs it; the
MindRecord format, the default ``data_format: 1`` the tests use, does not); train.py and eval.py are train.py's
``train_deepfm`` and eval.py's ``eval_deepfm`` without the ModelArts wrapper; config.py holds
default_config.yaml's values, shrunk. ``tests/test_zoo_deepfm.py`` preprocesses a synthetic Criteo file with
preprocess_data.py, trains and evaluates.
export.py is the zoo's export.py with src/model_utils/moxing_adapter.py (moxing_adapter.py),
run by ``tests/test_zoo_export.py``."""
