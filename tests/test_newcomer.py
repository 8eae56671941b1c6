"""What a newcomer trips on (issue 23): opcheck with what users hold, errors that name the layer the
user called, importing from the checkout, a CLI that tells the truth, MindSpore's first names."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import opforge
from opforge import ops
from opforge.testing import Sample, opcheck


def _elu(x):
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0.0)))


# ---------------------------------------------------------------------------------------------
# 1. opcheck accepts Tensors, arrays and Python numbers


@pytest.mark.parametrize(
    "make",
    [
        lambda a: (opforge.Tensor(a),),
        lambda a: Sample((opforge.Tensor(a),)),
        lambda a: opforge.Tensor(a),
        lambda a: a,
        lambda a: (a,),
    ],
    ids=["tuple-of-tensor", "sample-of-tensor", "bare-tensor", "bare-array", "tuple-of-array"],
)
def test_opcheck_accepts_tensor_and_array_samples(rng, make):
    a = rng.uniform(0.2, 2.0, (2, 3)) * rng.choice([-1.0, 1.0], (2, 3))
    report = opcheck(ops.Elu(), [make(a)], _elu, grad_samples=[make(a)])
    counts = report.counts()
    assert counts["forward"][0] == counts["forward"][1] > 0
    assert counts["gradient"][0] == counts["gradient"][1] > 0


def test_opcheck_accepts_python_numbers():
    report = opcheck(ops.Elu(), [-0.5, 2.0], _elu)
    assert report.counts()["forward"][1] >= 2
    # in a tuple a number is a weak scalar of a dtype group (Add's y)
    report = opcheck(ops.Add(), [(opforge.Tensor(np.ones((2,), np.float32)), 2)], lambda x, y: x + y)
    assert report.passed


@pytest.mark.parametrize("bad", [{"x": 1}, "abc", None])
def test_opcheck_names_a_bad_sample(bad):
    with pytest.raises(TypeError, match=r"For 'opcheck', sample 1 must be a Sample, a tuple of arguments"):
        opcheck(ops.Elu(), [(np.ones(2),), bad], _elu)


# ---------------------------------------------------------------------------------------------
# 3. Importing the checkout without its built extension


def test_import_from_a_source_tree_without_the_extension_says_what_to_do(tmp_path):
    src = os.path.dirname(opforge.__file__)
    shutil.copytree(src, tmp_path / "opforge", ignore=shutil.ignore_patterns("_C*", "__pycache__", "*.so"))
    numpy_dir = os.path.dirname(os.path.dirname(np.__file__))
    # -S: no site, so no editable-install finder; the copy comes first on the path, as the cwd would
    code = f"import sys; sys.path[:0] = [{str(tmp_path)!r}, {numpy_dir!r}]; import opforge"
    r = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "circular import" not in r.stderr
    assert "opforge._C" in r.stderr and "pip install -e ." in r.stderr and "another directory" in r.stderr
