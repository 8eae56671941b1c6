"""The linear-algebra operators' CPU op info (csrc/kernels/cpu/linalg.cc, through LAPACK): MatrixInverse,
MatrixDeterminant, LogMatrixDeterminant, Cholesky, Qr, Svd, Eigh, MatrixSolve, MatrixTriangularSolve, Lu."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_FLOATS = (DataType.F32_Default, DataType.F64_Default)


def _matrix_op_info(name: str, x, outputs: tuple, attrs: tuple = ()):
    """``x``: the input's name, or a tuple of the inputs' names."""
    inputs = (x,) if isinstance(x, str) else x
    reg = CpuRegOp(name)
    for i, inp in enumerate(inputs):
        reg = reg.input(i, inp, "required")
    for i, out in enumerate(outputs):
        reg = reg.output(i, out, "required")
    for attr, default in attrs:
        reg = reg.attr(attr, "optional", "bool", "all", default)
    for t in _FLOATS:
        reg = reg.dtype_format(*(t for _ in inputs), *(t for _ in outputs))
    return reg.get_op_info()


linalg_op_infos = (
    _matrix_op_info("MatrixInverse", "x", ("y",), (("adjoint", "False"),)),
    _matrix_op_info("MatrixDeterminant", "x", ("y",)),
    _matrix_op_info("LogMatrixDeterminant", "x", ("sign", "y")),
    _matrix_op_info("Cholesky", "input_x", ("output",), (("upper", "False"),)),
    _matrix_op_info("Qr", "x", ("q", "r"), (("full_matrices", "False"),)),
    _matrix_op_info("Svd", "input", ("s", "u", "v"), (("full_matrices", "False"), ("compute_uv", "True"))),
    _matrix_op_info("Eigh", "A", ("output_w", "output_v"), (("compute_eigenvectors", "True"), ("lower", "True"))),
    _matrix_op_info("MatrixSolve", ("matrix", "rhs"), ("y",), (("adjoint", "False"),)),
    _matrix_op_info("MatrixTriangularSolve", ("matrix", "rhs"), ("y",), (("lower", "True"), ("adjoint", "False"))),
)
_lu = CpuRegOp("Lu").input(0, "x", "required").output(0, "lu", "required").output(1, "pivots", "required")
_lu = _lu.output(2, "permutation", "required")
for _t in _FLOATS:
    _lu = _lu.dtype_format(_t, _t, DataType.I32_Default, DataType.I32_Default)
linalg_op_infos += (_lu.get_op_info(),)
for _info in linalg_op_infos:
    op_info_register(_info)
