"""Networks written the way MindSpore's model zoo writes them (our own copies of the public definitions'
structure), with ``mindspore`` replaced by ``opforge`` in the imports and nothing else changed in spirit.
``tests/test_model_zoo.py`` builds them and trains a few steps through ``Model.train``."""
