# ruff: noqa  (the model zoo's text as it is)
"""train.py's train_deepfm without its ModelArts wrapper (model_utils is config.py here)."""
import os
import sys

from opforge import context
from opforge.context import ParallelMode
from opforge.communication.management import init, get_rank, get_group_size
from opforge.train.model import Model
from opforge.train.callback import ModelCheckpoint, CheckpointConfig, TimeMonitor
from opforge.common import set_seed

from zoo.deepfm.deepfm import ModelBuilder, AUCMetric
from zoo.deepfm.dataset import create_dataset, DataType
from zoo.deepfm.callback import EvalCallBack, LossCallBack
from zoo.deepfm.config import config, get_device_num

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
config.do_eval = config.do_eval == 'True'
config.rank_size = get_device_num()

set_seed(1001)


def modelarts_pre_process():
    pass


def train_deepfm():
    """ train_deepfm """
    if config.rank_size > 1:
        if config.device_target == "Ascend":
            device_id = int(os.getenv('DEVICE_ID'))
            context.set_context(mode=context.GRAPH_MODE, device_target=config.device_target, device_id=device_id)
            context.reset_auto_parallel_context()
            context.set_auto_parallel_context(parallel_mode=ParallelMode.DATA_PARALLEL,
                                              gradients_mean=True,
                                              all_reduce_fusion_config=[9, 11])
            init()
            rank_id = int(os.environ.get('RANK_ID'))
        elif config.device_target == "GPU":
            init()
            context.set_context(mode=context.GRAPH_MODE, enable_graph_kernel=True, device_target=config.device_target)
            context.set_context(graph_kernel_flags="--enable_cluster_ops=MatMul")
            context.reset_auto_parallel_context()
            context.set_auto_parallel_context(device_num=get_group_size(),
                                              parallel_mode=ParallelMode.DATA_PARALLEL,
                                              gradients_mean=True)
            rank_id = get_rank()
        else:
            print("Unsupported device_target ", config.device_target)
            exit()
    else:
        if config.device_target == "Ascend":
            device_id = int(os.getenv('DEVICE_ID'))
            context.set_context(mode=context.GRAPH_MODE, device_target=config.device_target, device_id=device_id)
        elif config.device_target == "GPU":
            context.set_context(mode=context.GRAPH_MODE, enable_graph_kernel=True, device_target=config.device_target)
            context.set_context(graph_kernel_flags="--enable_cluster_ops=MatMul")
        else:
            context.set_context(mode=context.GRAPH_MODE, device_target=config.device_target, enable_graph_kernel=True)
        config.rank_size = None
        rank_id = None

    ds_train = create_dataset(config.dataset_path,
                              train_mode=True,
                              epochs=1,
                              batch_size=config.batch_size,
                              data_type=DataType(config.data_format),
                              rank_size=config.rank_size,
                              rank_id=rank_id)

    steps_size = ds_train.get_dataset_size()

    if config.convert_dtype:
        config.convert_dtype = config.device_target != "CPU"
    model_builder = ModelBuilder(config, config)
    train_net, eval_net = model_builder.get_train_eval_net()
    auc_metric = AUCMetric()
    model = Model(train_net, eval_network=eval_net, metrics={"auc": auc_metric})

    time_callback = TimeMonitor(data_size=ds_train.get_dataset_size())
    loss_callback = LossCallBack(loss_file_path=config.loss_file_name)
    callback_list = [time_callback, loss_callback]

    if config.save_checkpoint:
        if config.rank_size:
            config.ckpt_file_name_prefix = config.ckpt_file_name_prefix + str(get_rank())
            config.ckpt_path = os.path.join(config.ckpt_path, 'ckpt_' + str(get_rank()) + '/')
        if config.device_target != "Ascend":
            config_ck = CheckpointConfig(save_checkpoint_steps=steps_size,
                                         keep_checkpoint_max=config.keep_checkpoint_max)
        else:
            config_ck = CheckpointConfig(save_checkpoint_steps=config.save_checkpoint_steps,
                                         keep_checkpoint_max=config.keep_checkpoint_max)
        ckpt_cb = ModelCheckpoint(prefix=config.ckpt_file_name_prefix,
                                  directory=config.ckpt_path,
                                  config=config_ck)
        callback_list.append(ckpt_cb)

    if config.do_eval:
        ds_eval = create_dataset(config.dataset_path, train_mode=False,
                                 epochs=1,
                                 batch_size=config.batch_size,
                                 data_type=DataType(config.data_format))
        eval_callback = EvalCallBack(model, ds_eval, auc_metric,
                                     eval_file_path=config.eval_file_name)
        callback_list.append(eval_callback)
    model.train(config.train_epochs, ds_train, callbacks=callback_list, dataset_sink_mode=True)
