"""MindSpore's ``ops.signature``: ``make_sig`` and the read/write, kind and dtype-group enums."""

from opforge.dispatch.signature import EMPTY, Signature, make_sig, sig_dtype, sig_kind, sig_rw

__all__ = ["sig_rw", "sig_kind", "sig_dtype", "Signature", "make_sig", "EMPTY"]
