"""CTCLoss CPU op info."""

from opforge.op_info import CpuRegOp, DataType, op_info_register

_ctc = (
    CpuRegOp("CTCLoss")
    .input(0, "x", "required")
    .input(1, "labels_indices", "required")
    .input(2, "labels_values", "required")
    .input(3, "sequence_length", "required")
    .output(0, "loss", "required")
    .output(1, "gradient", "required")
    .attr("preprocess_collapse_repeated", "optional", "bool", "all", "False")
    .attr("ctc_merge_repeated", "optional", "bool", "all", "True")
    .attr("ignore_longer_outputs_than_inputs", "optional", "bool", "all", "False")
)
for _t in (DataType.F16_Default, DataType.F32_Default, DataType.F64_Default):
    _ctc = _ctc.dtype_format(_t, DataType.I64_Default, DataType.I32_Default, DataType.I32_Default, _t, _t)
ctc_loss_op_info = _ctc.get_op_info()


@op_info_register(ctc_loss_op_info)
def _ctc_loss_cpu():
    """CTCLoss CPU registration."""
