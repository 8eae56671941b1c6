"""Sweep records (see op_db.py) for operators added after the first slice: math_array ops."""

from __future__ import annotations

RECORDS: list = []
