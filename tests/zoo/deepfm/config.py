# ruff: noqa  (the model zoo's text as it is)
"""default_config.yaml's values as the namespace model_utils/config.py builds, shrunk (vocabulary, batch of
one MindRecord row of line_per_sample = 1000 lines, embedding and deep layers, epochs); device_adapter's
local functions."""
from types import SimpleNamespace

config = SimpleNamespace(
    enable_modelarts=False,
    data_path="/cache/data",
    output_path="/cache/train",
    load_path="/cache/checkpoint_path",
    device_target="CPU",
    enable_profiling=False,
    # data config
    data_vocab_size=200,
    train_num_of_parts=21,
    test_num_of_parts=3,
    batch_size=1000,
    data_field_size=39,
    data_format=1,
    # model config
    data_emb_dim=8,
    deep_layer_args=[[32, 16, 16, 8], "relu"],
    init_args=[-0.01, 0.01],
    weight_bias_init=['normal', 'normal'],
    keep_prob=0.9,
    convert_dtype=True,
    # train config
    l2_coef=0.00008,
    learning_rate=0.005,
    epsilon=0.00000005,
    loss_scale=1024.0,
    train_epochs=4,
    save_checkpoint=True,
    ckpt_file_name_prefix="deepfm",
    save_checkpoint_steps=1,
    keep_checkpoint_max=50,
    eval_callback=True,
    loss_callback=True,
    # train.py 'CTR Prediction'
    dataset_path="/cache/data",
    ckpt_path="/cache/train",
    eval_file_name="./auc.log",
    loss_file_name="./loss.log",
    do_eval='True',
    # eval.py 'CTR Prediction'
    checkpoint_path="/cache/train/deepfm-4_9.ckpt",
    # export.py
    device_id=0,
    ckpt_file="/cache/train/deepfm-5_2582.ckpt",
    file_name="deepfm",
    file_format="MINDIR",
    # src/preprocess_data.py
    dense_dim=13,
    slot_dim=26,
    threshold=100,
    train_line_count=12000,
    skip_id_convert=0,
)


def get_device_id():
    return config.device_id


def get_device_num():
    return 1
