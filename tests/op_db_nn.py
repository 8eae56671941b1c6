"""Sweep records (see op_db.py) for operators added after the first slice: nn ops."""

from __future__ import annotations

RECORDS: list = []
