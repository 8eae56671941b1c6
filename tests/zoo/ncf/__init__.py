# ruff: noqa  (the model zoo's text as it is)
"""NCF as MindSpore's model zoo writes it: the files of mindspore-ai/models research/recommend/ncf (Apache-2.0;
the model zoo's official/recommend/ncf) with ``mindspore`` replaced by ``opforge`` in the imports and ``src.``
by ``zoo.ncf.`` (license headers dropped). ncf.py, dataset.py, metrics.py, callbacks.py, lr_schedule.py,
constants.py and stat_utils.py are src/'s files unchanged except that dataset.py imports pandas only where it is
installed (``load_data`` reads the ratings CSV with pandas, not installed here; the tests write the pickled
cache that ``load_data`` reads instead); movielens.py keeps src/movielens.py's names and constants (its
download and CSV conversion need six, absl and pandas); train.py and eval.py are train.py's ``run_train`` and
eval.py's ``run_eval`` without the ModelArts wrapper and absl's logging set-up; config.py holds
default_config.yaml's values, shrunk. ``tests/test_zoo_ncf.py`` runs them.
export.py is the zoo's export.py with model_utils/moxing_adapter.py (moxing_adapter.py),
run by ``tests/test_zoo_export.py``."""
