# ruff: noqa  (the model zoo's text as it is)
"""gd_config.yaml's values as model_utils/config.py builds them (``extra_operations`` for 'general_distill':
the decay filter as a function, the net configs as BertConfig), shrunk (sizes, batch, epochs), on the CPU, with
MindRecord data; and export.py's td_student_net_cfg (td_config_sst2.yaml's, shrunk) and get_device_id."""
from types import SimpleNamespace

import opforge.common.dtype as mstype
from zoo.tinybert.tinybert_model import BertConfig


def create_filter_fun(keywords):
    return lambda x: not (True in [key in x.name.lower() for key in keywords])


config = SimpleNamespace(
    enable_modelarts=False,
    data_path="/cache/data",
    output_path="/cache/train",
    load_path="/cache/checkpoint_path",
    device_target="CPU",
    enable_profiling=False,
    modelarts_dataset_unzip_name="",
    folder_name_under_zip_file="./",
    description="general_distill",
    distribute="false",
    epoch_size=3,
    device_id=0,
    device_num=1,
    save_ckpt_step=4,
    max_ckpt_num=1,
    do_shuffle="true",
    enable_data_sink="true",
    data_sink_steps=1,
    save_ckpt_path="",
    load_teacher_ckpt_path="",
    data_dir="",
    schema_dir="",
    dataset_type="mindrecord",
    common_cfg=SimpleNamespace(
        batch_size=4,
        loss_scale_value=2 ** 16,
        scale_factor=2,
        scale_window=1000,
        AdamWeightDecay=SimpleNamespace(
            learning_rate=0.00005 * 100,  # a hundred times the zoo's: a few steps
            end_learning_rate=0.00000000000001,
            power=1.0,
            weight_decay=0.0001,
            eps=0.000001,
            decay_filter=create_filter_fun(['layernorm', 'bias']),
        ),
    ),
    bert_teacher_net_cfg=BertConfig(
        seq_length=16, vocab_size=50, hidden_size=32, num_hidden_layers=4, num_attention_heads=4,
        intermediate_size=64, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        max_position_embeddings=32, type_vocab_size=2, initializer_range=0.02, use_relative_positions=False,
        dtype=mstype.float32, compute_type=mstype.float16,
    ),
    bert_student_net_cfg=BertConfig(
        seq_length=16, vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=32, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        max_position_embeddings=32, type_vocab_size=2, initializer_range=0.02, use_relative_positions=False,
        dtype=mstype.float32, compute_type=mstype.float16,
    ),
)
common_cfg = config.common_cfg
bert_teacher_net_cfg = config.bert_teacher_net_cfg
bert_student_net_cfg = config.bert_student_net_cfg

# export.py's: td_config_sst2.yaml's student network (its 'task_distill' config; export.py sets its seq_length and
# batch_size), shrunk as bert_student_net_cfg; and model_utils/device_adapter.py's local get_device_id
td_student_net_cfg = BertConfig(
    seq_length=64, vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=32, hidden_act="gelu", hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    max_position_embeddings=64, type_vocab_size=2, initializer_range=0.02, use_relative_positions=False,
    dtype=mstype.float32, compute_type=mstype.float16,
)


def get_device_id():
    return config.device_id
