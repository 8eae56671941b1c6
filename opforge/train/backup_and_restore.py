"""MindSpore's ``BackupAndRestore`` callback: the training network saved to ``backup_dir/backup.ckpt`` every
``save_freq`` epochs and loaded back when a training begins, so an interrupted run resumes its weights."""

from __future__ import annotations

import os

from opforge import log as logger
from opforge.nn.checkpoint import load_checkpoint, save_checkpoint
from opforge.train.callback_base import Callback

__all__ = ["BackupAndRestore"]


class BackupAndRestore(Callback):
    """``BackupAndRestore(backup_dir, save_freq="epoch", delete_checkpoint=True)``: ``save_freq`` "epoch" (every
    epoch) or an int > 0 (every that many epochs); with ``delete_checkpoint`` the file is removed when training
    ends."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        where = "For 'BackupAndRestore', the"
        if not isinstance(backup_dir, str) or not backup_dir:
            raise ValueError(f"{where} 'backup_dir' must be a non-empty str, but got {backup_dir!r}.")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1):
            raise ValueError(f"{where} 'save_freq' must be 'epoch' or an int > 0, but got {save_freq!r}.")
        if not isinstance(delete_checkpoint, bool):
            raise TypeError(f"{where} 'delete_checkpoint' must be a bool, but got {type(delete_checkpoint).__name__}.")
        os.makedirs(backup_dir, exist_ok=True)
        self.backup_file = os.path.join(backup_dir, "backup.ckpt")
        self.save_freq = 1 if save_freq == "epoch" else save_freq
        self.delete_checkpoint = delete_checkpoint

    def on_train_begin(self, run_context):
        if os.path.exists(self.backup_file):
            logger.info(f"BackupAndRestore: loading {self.backup_file} into the training network.")
            load_checkpoint(self.backup_file, net=run_context.original_args().train_network)

    def on_train_epoch_end(self, run_context):
        cb = run_context.original_args()
        if cb.cur_epoch_num % self.save_freq == 0:
            save_checkpoint(cb.train_network, self.backup_file)

    def on_train_end(self, run_context):
        if self.delete_checkpoint and os.path.exists(self.backup_file):
            os.remove(self.backup_file)
