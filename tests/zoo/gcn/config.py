# ruff: noqa  (the model zoo's text as it is)
"""
network config setting, will be used in train.py
"""


class ConfigGCN():
    """Configuration for GCN"""
    learning_rate = 0.01
    epochs = 200
    hidden1 = 16
    dropout = 0.5
    weight_decay = 5e-4
    early_stopping = 50
    save_ckpt_steps = 549
    keep_ckpt_max = 10
    ckpt_dir = './ckpt'
    best_ckpt_dir = './best_ckpt'
    best_ckpt_name = 'best.ckpt'
    eval_start_epoch = 100
    save_best_ckpt = True
    eval_interval = 1
