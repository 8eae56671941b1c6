# ruff: noqa  (the model zoo's text as it is)
"""ag_config.yaml's values as the namespace model_utils/config.py builds, shrunk (vocabulary, buckets, batch)."""
from types import SimpleNamespace

config = SimpleNamespace(
    device_target="CPU",
    vocab_size=202,
    buckets=[8, 16, 24],
    test_buckets=[24],
    batch_size=8,
    embedding_dims=16,
    num_class=4,
    epoch=3,
    lr=0.2,
    min_lr=0.000001,
    decay_steps=115,
    warmup_steps=400000,
    poly_lr_scheduler_power=0.001,
    epoch_count=1,
    pretrain_ckpt_dir="",
    save_ckpt_steps=116,
    save_ckpt_dir="./",
    keep_ckpt_max=10,
    distribute_batch_size_gpu=64,
    dataset_path="",
    data_name="ag",
    run_distribute=False,
    model_ckpt="",
    rank_id=0,
)
