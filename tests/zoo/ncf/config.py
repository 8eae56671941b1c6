# ruff: noqa  (the model zoo's text as it is)
"""default_config.yaml's values as the namespace model_utils/config.py builds, shrunk (train_epochs);
model_utils/device_adapter.py's local functions."""
from types import SimpleNamespace

config = SimpleNamespace(
    enable_modelarts=False,
    data_path="./dataset/",
    output_path="./output",
    device_target="CPU",
    enable_profiling=False,
    # Training options
    dataset="ml-1m",
    train_epochs=3,
    batch_size=256,
    eval_batch_size=160000,
    num_neg=4,
    layers=[64, 32, 16],
    num_factors=16,
    checkpoint_path="./checkpoint/",
    num_parallel_workers=1,
    # Eval options
    eval_file_name="eval.log",
    checkpoint_file_path="./checkpoint/NCF-3_472.ckpt",
    # Export options
    device_id=0,
    ckpt_file="./checkpoint/NCF-25_19418.ckpt",
    file_name="ncf",
    file_format="MINDIR",
)


def get_device_id():
    return config.device_id


def get_device_num():
    return 1


def get_rank_id():
    return 0


def get_job_id():
    return "Local Job"
