# ruff: noqa  (the model zoo's text as it is)
