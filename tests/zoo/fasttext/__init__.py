# ruff: noqa  (the model zoo's text as it is)
"""FastText as MindSpore's model zoo writes it: the files of mindspore-ai/models research/nlp/fasttext/src
(Apache-2.0; the model zoo's official/nlp/FastText) with ``mindspore`` replaced by ``opforge`` in the imports and
``src.`` by ``zoo.fasttext.`` (license headers dropped). fasttext_model.py, fasttext_train.py, load_dataset.py
and lr_schedule.py are the zoo's files unchanged; dataset.py keeps only src/dataset.py's bucket padding
(``FastTextDataPreProcess._get_bucket_length`` and the padding loop of ``load``) and ``write_to_mindrecord``
(spaCy tokenising is left out: the tests write token ids); eval.py is eval.py's ``FastTextInferCell`` and
``load_infer_dataset`` (its config/ModelArts plumbing left out). ``tests/test_zoo_fasttext.py`` trains it as
train.py's ``_build_training_pipeline`` does and evaluates it as eval.py's ``run_fasttext_infer`` does.
export.py is the zoo's export.py with model_utils/moxing_adapter.py (moxing_adapter.py; config.py gains
ag_config.yaml's export keys), run by ``tests/test_zoo_export.py``."""
