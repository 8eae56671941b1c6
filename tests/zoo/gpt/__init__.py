"""MindSpore model zoo's GPT (official/nlp/GPT/src), with ``mindspore`` replaced by ``opforge``."""
