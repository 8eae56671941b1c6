"""The model zoo's Wide&Deep (official/recommend/Wide_and_Deep, Apache-2.0; its structure and the MindSpore APIs
it calls kept, with ``mindspore`` replaced by ``opforge`` in the imports): src/wide_and_deep.py (``WideDeepModel``
with two ``nn.EmbeddingLookup`` tables, five float16 ``DenseLayer``s, ``NetWithLossClass``, ``TrainStepWrap`` with
FTRL on the wide part and Adam on the deep part, ``PredictWithSigmoid``), src/metrics.py (``AUCMetric``),
src/callbacks.py (``LossCallBack``, ``EvalCallBack``) and src/datasets.py's MindRecord path
(``batch(batch_size / line_per_sample)`` then ``map(_padding_func)``), fed by a ``GeneratorDataset`` of synthetic
Criteo-like rows instead of MindRecord files. Sizes are the test's (tests/test_zoo_wide_deep.py)."""

import time

import numpy as np
from opforge.nn.wrap.grad_reducer import DistributedGradReducer
from sklearn.metrics import roc_auc_score

import opforge.common.dtype as mstype
import opforge.dataset as ds
import opforge.ops as ops
from opforge import Parameter, ParameterTuple, context, nn
from opforge import log as logger
from opforge.common.initializer import Uniform, initializer
from opforge.communication.management import get_group_size, get_rank
from opforge.context import ParallelMode
from opforge.nn import Dropout
from opforge.nn.metrics import Metric
from opforge.nn.optim import FTRL, Adam
from opforge.train.callback import Callback

np_type = np.float32
ms_type = mstype.float32


def init_method(method, shape, name, max_val=1.0):
    """
    parameter init method
    """
    if method in ["uniform"]:
        params = Parameter(initializer(Uniform(max_val), shape, ms_type), name=name)
    elif method == "one":
        params = Parameter(initializer("ones", shape, ms_type), name=name)
    elif method == "zero":
        params = Parameter(initializer("zeros", shape, ms_type), name=name)
    elif method == "normal":
        params = Parameter(initializer("normal", shape, ms_type), name=name)
    return params


def init_var_dict(init_args, in_vars):
    """
    var init function
    """
    var_map = {}
    _, _max_val = init_args
    for _, item in enumerate(in_vars):
        key, shape, method = item
        if key not in var_map.keys():
            if method in ["random", "uniform"]:
                var_map[key] = Parameter(initializer(Uniform(_max_val), shape, ms_type), name=key)
            elif method == "one":
                var_map[key] = Parameter(initializer("ones", shape, ms_type), name=key)
            elif method == "zero":
                var_map[key] = Parameter(initializer("zeros", shape, ms_type), name=key)
            elif method == "normal":
                var_map[key] = Parameter(initializer("normal", shape, ms_type), name=key)
    return var_map


class DenseLayer(nn.Cell):
    """
    Dense Layer for Deep Layer of WideDeep Model;
    Containing: activation, matmul, bias_add;
    Args:
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        weight_bias_init,
        act_str,
        keep_prob=0.5,
        use_activation=True,
        convert_dtype=True,
        drop_out=False,
    ):
        super().__init__()
        weight_init, bias_init = weight_bias_init
        self.weight = init_method(weight_init, [input_dim, output_dim], name="weight")
        self.bias = init_method(bias_init, [output_dim], name="bias")
        self.act_func = self._init_activation(act_str)
        self.matmul = ops.MatMul(transpose_b=False)
        self.bias_add = ops.BiasAdd()
        self.cast = ops.Cast()
        self.dropout = Dropout(p=1 - keep_prob)
        self.use_activation = use_activation
        self.convert_dtype = convert_dtype
        self.drop_out = drop_out

    def _init_activation(self, act_str):
        act_str = act_str.lower()
        if act_str == "relu":
            act_func = ops.ReLU()
        elif act_str == "sigmoid":
            act_func = ops.Sigmoid()
        elif act_str == "tanh":
            act_func = ops.Tanh()
        return act_func

    def construct(self, x):
        """
        Construct Dense layer
        """
        if self.training and self.drop_out:
            x = self.dropout(x)
        if self.convert_dtype:
            x = self.cast(x, mstype.float16)
            weight = self.cast(self.weight, mstype.float16)
            bias = self.cast(self.bias, mstype.float16)
            wx = self.matmul(x, weight)
            wx = self.bias_add(wx, bias)
            if self.use_activation:
                wx = self.act_func(wx)
            wx = self.cast(wx, mstype.float32)
        else:
            wx = self.matmul(x, self.weight)
            wx = self.bias_add(wx, self.bias)
            if self.use_activation:
                wx = self.act_func(wx)
        return wx


class WideDeepModel(nn.Cell):
    """
    From paper: " Wide & Deep Learning for Recommender Systems"
    Args:
        config (Class): The default config of Wide&Deep
    """

    def __init__(self, config):
        super().__init__()
        self.batch_size = config.batch_size
        host_device_mix = bool(config.host_device_mix)
        parameter_server = bool(config.parameter_server)
        parallel_mode = context.get_auto_parallel_context("parallel_mode")
        is_auto_parallel = parallel_mode in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)
        if is_auto_parallel:
            self.batch_size = self.batch_size * get_group_size()
        sparse = config.sparse
        self.field_size = config.field_size
        self.emb_dim = config.emb_dim
        self.weight_init, self.bias_init = config.weight_bias_init
        self.deep_input_dims = self.field_size * self.emb_dim
        self.all_dim_list = [self.deep_input_dims] + config.deep_layer_dim + [1]
        init_acts = [("Wide_b", [1], config.emb_init)]
        var_map = init_var_dict(config.init_args, init_acts)
        self.wide_b = var_map["Wide_b"]
        self.dense_layer_1 = DenseLayer(
            self.all_dim_list[0],
            self.all_dim_list[1],
            config.weight_bias_init,
            config.deep_layer_act,
            convert_dtype=True,
            drop_out=config.dropout_flag,
        )
        self.dense_layer_2 = DenseLayer(
            self.all_dim_list[1],
            self.all_dim_list[2],
            config.weight_bias_init,
            config.deep_layer_act,
            convert_dtype=True,
            drop_out=config.dropout_flag,
        )
        self.dense_layer_3 = DenseLayer(
            self.all_dim_list[2],
            self.all_dim_list[3],
            config.weight_bias_init,
            config.deep_layer_act,
            convert_dtype=True,
            drop_out=config.dropout_flag,
        )
        self.dense_layer_4 = DenseLayer(
            self.all_dim_list[3],
            self.all_dim_list[4],
            config.weight_bias_init,
            config.deep_layer_act,
            convert_dtype=True,
            drop_out=config.dropout_flag,
        )
        self.dense_layer_5 = DenseLayer(
            self.all_dim_list[4],
            self.all_dim_list[5],
            config.weight_bias_init,
            config.deep_layer_act,
            use_activation=False,
            convert_dtype=True,
            drop_out=config.dropout_flag,
        )
        self.wide_mul = ops.Mul()
        self.deep_mul = ops.Mul()
        self.reduce_sum = ops.ReduceSum(keep_dims=False)
        self.reshape = ops.Reshape()
        self.deep_reshape = ops.Reshape()
        self.square = ops.Square()
        self.concat = ops.Concat(axis=1)
        self.unique = ops.Unique().shard(((1,),))
        self.wide_gatherv2 = ops.Gather()
        self.deep_gatherv2 = ops.Gather()
        if is_auto_parallel and sparse and not config.field_slice and not parameter_server:
            target = "CPU" if host_device_mix else "DEVICE"
            self.wide_embeddinglookup = nn.EmbeddingLookup(
                config.vocab_size, 1, target=target, slice_mode=nn.EmbeddingLookup.TABLE_ROW_SLICE
            )
            if config.deep_table_slice_mode == "column_slice":
                self.deep_embeddinglookup = nn.EmbeddingLookup(
                    config.vocab_size, self.emb_dim, target=target, slice_mode=nn.EmbeddingLookup.TABLE_COLUMN_SLICE
                )
                if config.use_sp:
                    self.dense_layer_1.matmul.shard(((1, get_group_size()), (get_group_size(), 1)))
                    self.dense_layer_1.bias_add.shard(((get_group_size(), 1), (1,)))
                    self.deep_mul.shard(((1, 1, get_group_size()), (1, 1, 1)))
                else:
                    self.dense_layer_1.dropout.dropout.shard(((1, get_group_size()),))
                    self.dense_layer_1.matmul.shard(((1, get_group_size()), (get_group_size(), 1)))
                    self.deep_mul.shard(((1, 1, get_group_size()), (1, 1, 1)))
                self.dense_layer_1.matmul.add_prim_attr("field_size", self.field_size)
                self.deep_reshape.add_prim_attr("skip_redistribution", True)
            else:
                self.deep_embeddinglookup = nn.EmbeddingLookup(
                    config.vocab_size, self.emb_dim, target=target, slice_mode=nn.EmbeddingLookup.TABLE_ROW_SLICE
                )
            self.reduce_sum.add_prim_attr("cross_batch", True)
            self.embedding_table = self.deep_embeddinglookup.embedding_table
        elif is_auto_parallel and host_device_mix and config.field_slice and config.full_batch and config.manual_shape:
            manual_shapes = tuple(s[0] for s in config.manual_shape)
            self.deep_embeddinglookup = nn.EmbeddingLookup(
                config.vocab_size, self.emb_dim, slice_mode=nn.EmbeddingLookup.FIELD_SLICE, manual_shapes=manual_shapes
            )
            self.wide_embeddinglookup = nn.EmbeddingLookup(
                config.vocab_size, 1, slice_mode=nn.EmbeddingLookup.FIELD_SLICE, manual_shapes=manual_shapes
            )
            self.deep_mul.shard(((1, get_group_size(), 1), (1, get_group_size(), 1)))
            self.wide_mul.shard(((1, get_group_size(), 1), (1, get_group_size(), 1)))
            self.reduce_sum.shard(((1, get_group_size(), 1),))
            self.dense_layer_1.dropout.dropout.shard(((1, get_group_size()),))
            self.dense_layer_1.matmul.shard(((1, get_group_size()), (get_group_size(), 1)))
            self.embedding_table = self.deep_embeddinglookup.embedding_table
        elif parameter_server:
            cache_enable = config.vocab_cache_size > 0
            target = "DEVICE" if cache_enable else "CPU"
            if not cache_enable:
                sparse = True
            if is_auto_parallel and config.full_batch and cache_enable:
                self.deep_embeddinglookup = nn.EmbeddingLookup(
                    config.vocab_size,
                    self.emb_dim,
                    target=target,
                    slice_mode=nn.EmbeddingLookup.TABLE_ROW_SLICE,
                    sparse=sparse,
                    vocab_cache_size=config.vocab_cache_size,
                )
                self.wide_embeddinglookup = nn.EmbeddingLookup(
                    config.vocab_size,
                    1,
                    target=target,
                    slice_mode=nn.EmbeddingLookup.TABLE_ROW_SLICE,
                    sparse=sparse,
                    vocab_cache_size=config.vocab_cache_size,
                )
            else:
                self.deep_embeddinglookup = nn.EmbeddingLookup(
                    config.vocab_size,
                    self.emb_dim,
                    target=target,
                    sparse=sparse,
                    vocab_cache_size=config.vocab_cache_size,
                )
                self.wide_embeddinglookup = nn.EmbeddingLookup(
                    config.vocab_size, 1, target=target, sparse=sparse, vocab_cache_size=config.vocab_cache_size
                )
            self.embedding_table = self.deep_embeddinglookup.embedding_table
            self.deep_embeddinglookup.embedding_table.set_param_ps()
            self.wide_embeddinglookup.embedding_table.set_param_ps()
        else:
            self.deep_embeddinglookup = nn.EmbeddingLookup(
                config.vocab_size,
                self.emb_dim,
                target="DEVICE",
                sparse=sparse,
                vocab_cache_size=config.vocab_cache_size,
            )
            self.wide_embeddinglookup = nn.EmbeddingLookup(
                config.vocab_size, 1, target="DEVICE", sparse=sparse, vocab_cache_size=config.vocab_cache_size
            )
            self.embedding_table = self.deep_embeddinglookup.embedding_table

    def construct(self, id_hldr, wt_hldr):
        """
        Args:
            id_hldr: batch ids;
            wt_hldr: batch weights;
        """
        # Wide layer
        wide_id_weight = self.wide_embeddinglookup(id_hldr)
        # Deep layer
        deep_id_embs = self.deep_embeddinglookup(id_hldr)
        mask = self.reshape(wt_hldr, (self.batch_size, self.field_size, 1))
        # Wide layer
        wx = self.wide_mul(wide_id_weight, mask)
        wide_out = self.reshape(self.reduce_sum(wx, 1) + self.wide_b, (-1, 1))
        # Deep layer
        vx = self.deep_mul(deep_id_embs, mask)
        deep_in = self.deep_reshape(vx, (-1, self.field_size * self.emb_dim))
        deep_in = self.dense_layer_1(deep_in)
        deep_in = self.dense_layer_2(deep_in)
        deep_in = self.dense_layer_3(deep_in)
        deep_in = self.dense_layer_4(deep_in)
        deep_out = self.dense_layer_5(deep_in)
        out = wide_out + deep_out
        return out, self.embedding_table


class NetWithLossClass(nn.Cell):
    """ "
    Provide WideDeep training loss through network.
    Args:
        network (Cell): The training network
        config (Class): WideDeep config
    """

    def __init__(self, network, config):
        super().__init__(auto_prefix=False)
        host_device_mix = bool(config.host_device_mix)
        parameter_server = bool(config.parameter_server)
        sparse = config.sparse
        parallel_mode = context.get_auto_parallel_context("parallel_mode")
        is_auto_parallel = parallel_mode in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)
        self.no_l2loss = is_auto_parallel if (host_device_mix or config.field_slice) else parameter_server
        if sparse:
            self.no_l2loss = True
        self.network = network
        self.l2_coef = config.l2_coef
        self.loss = ops.SigmoidCrossEntropyWithLogits()
        self.square = ops.Square()
        self.reduceMean_false = ops.ReduceMean(keep_dims=False)
        if is_auto_parallel:
            self.reduceMean_false.add_prim_attr("cross_batch", True)
        self.reduceSum_false = ops.ReduceSum(keep_dims=False)

    def construct(self, batch_ids, batch_wts, label):
        """
        Construct NetWithLossClass
        """
        predict, embedding_table = self.network(batch_ids, batch_wts)
        log_loss = self.loss(predict, label)
        wide_loss = self.reduceMean_false(log_loss)
        if self.no_l2loss:
            deep_loss = wide_loss
        else:
            l2_loss_v = self.reduceSum_false(self.square(embedding_table)) / 2
            deep_loss = self.reduceMean_false(log_loss) + self.l2_coef * l2_loss_v

        return wide_loss, deep_loss


class IthOutputCell(nn.Cell):
    def __init__(self, network, output_index):
        super().__init__()
        self.network = network
        self.output_index = output_index

    def construct(self, x1, x2, x3):
        predict = self.network(x1, x2, x3)[self.output_index]
        return predict


class TrainStepWrap(nn.Cell):
    """
    Encapsulation class of WideDeep network training.
    Append Adam and FTRL optimizers to the training network after that construct
    function can be called to create the backward graph.
    Args:
        network (Cell): The training network. Note that loss function should have been added.
        sens (Number): The adjust parameter. Default: 1024.0
        host_device_mix (Bool): Whether run in host and device mix mode. Default: False
        parameter_server (Bool): Whether run in parameter server mode. Default: False
    """

    def __init__(
        self, network, sens=1024.0, host_device_mix=False, parameter_server=False, sparse=False, cache_enable=False
    ):
        super().__init__()
        parallel_mode = context.get_auto_parallel_context("parallel_mode")
        is_auto_parallel = parallel_mode in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)
        self.network = network
        self.network.set_train()
        self.trainable_params = network.trainable_params()
        weights_w = []
        weights_d = []
        for params in self.trainable_params:
            if "wide" in params.name:
                weights_w.append(params)
            else:
                weights_d.append(params)
        self.weights_w = ParameterTuple(weights_w)
        self.weights_d = ParameterTuple(weights_d)

        if (sparse and is_auto_parallel) or (sparse and parameter_server):
            self.optimizer_d = Adam(self.weights_d, learning_rate=3.5e-4, eps=1e-8, loss_scale=sens, use_lazy=True)
            self.optimizer_w = FTRL(
                learning_rate=5e-2, params=self.weights_w, l1=1e-8, l2=1e-8, initial_accum=1.0, loss_scale=sens
            )
            if host_device_mix or (parameter_server and not cache_enable):
                self.optimizer_w.target = "CPU"
                self.optimizer_d.target = "CPU"
        else:
            self.optimizer_d = Adam(self.weights_d, learning_rate=3.5e-4, eps=1e-8, loss_scale=sens)
            self.optimizer_w = FTRL(
                learning_rate=5e-2, params=self.weights_w, l1=1e-8, l2=1e-8, initial_accum=1.0, loss_scale=sens
            )
        self.hyper_map = ops.HyperMap()
        self.grad_w = ops.GradOperation(get_by_list=True, sens_param=True)
        self.grad_d = ops.GradOperation(get_by_list=True, sens_param=True)
        self.sens = sens
        self.loss_net_w = IthOutputCell(network, output_index=0)
        self.loss_net_d = IthOutputCell(network, output_index=1)
        self.loss_net_w.set_grad()
        self.loss_net_d.set_grad()

        self.reducer_flag = False
        self.grad_reducer_w = None
        self.grad_reducer_d = None
        self.reducer_flag = parallel_mode in (ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL)
        if self.reducer_flag:
            mean = context.get_auto_parallel_context("gradients_mean")
            degree = context.get_auto_parallel_context("device_num")
            self.grad_reducer_w = DistributedGradReducer(self.optimizer_w.parameters, mean, degree)
            self.grad_reducer_d = DistributedGradReducer(self.optimizer_d.parameters, mean, degree)

    def construct(self, batch_ids, batch_wts, label):
        """
        Construct wide and deep model
        """
        weights_w = self.weights_w
        weights_d = self.weights_d
        loss_w, loss_d = self.network(batch_ids, batch_wts, label)
        sens_w = ops.Fill()(ops.DType()(loss_w), ops.Shape()(loss_w), self.sens)
        sens_d = ops.Fill()(ops.DType()(loss_d), ops.Shape()(loss_d), self.sens)
        grads_w = self.grad_w(self.loss_net_w, weights_w)(batch_ids, batch_wts, label, sens_w)
        grads_d = self.grad_d(self.loss_net_d, weights_d)(batch_ids, batch_wts, label, sens_d)
        if self.reducer_flag:
            grads_w = self.grad_reducer_w(grads_w)
            grads_d = self.grad_reducer_d(grads_d)
        return ops.depend(loss_w, self.optimizer_w(grads_w)), ops.depend(loss_d, self.optimizer_d(grads_d))


class PredictWithSigmoid(nn.Cell):
    """
    Predict definition
    """

    def __init__(self, network):
        super().__init__()
        self.network = network
        self.sigmoid = ops.Sigmoid()
        parallel_mode = context.get_auto_parallel_context("parallel_mode")
        full_batch = context.get_auto_parallel_context("full_batch")
        is_auto_parallel = parallel_mode in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL)
        if is_auto_parallel and full_batch:
            self.sigmoid.shard(((1, 1),))

    def construct(self, batch_ids, batch_wts, labels):
        (
            logits,
            _,
        ) = self.network(batch_ids, batch_wts)
        pred_probs = self.sigmoid(logits)
        return logits, pred_probs, labels


# -- src/metrics.py --------------------------------------------------------------------------------


class AUCMetric(Metric):
    """
    Area under cure metric
    """

    def __init__(self):
        super().__init__()
        self.clear()

    def clear(self):
        """Clear the internal evaluation result."""
        self.true_labels = []
        self.pred_probs = []

    def update(self, *inputs):  # inputs
        """Update list of predicts and labels."""
        all_predict = inputs[1].asnumpy().flatten().tolist()  # predict
        all_label = inputs[2].asnumpy().flatten().tolist()  # label
        self.pred_probs.extend(all_predict)
        self.true_labels.extend(all_label)

    def eval(self):
        if len(self.true_labels) != len(self.pred_probs):
            raise RuntimeError("true_labels.size is not equal to pred_probs.size()")

        try:
            auc = roc_auc_score(self.true_labels, self.pred_probs)
        except (ValueError, RuntimeError) as e:
            auc = None
            logger.warning(e.__str__())

        print("====" * 20 + " auc_metric  end")
        print("====" * 20 + f" auc: {auc}")
        return auc


# -- src/callbacks.py --------------------------------------------------------------------------------


def add_write(file_path, out_str):
    """
    add lines to the file
    """
    with open(file_path, "a+", encoding="utf-8") as file_out:
        file_out.write(out_str + "\n")


class LossCallBack(Callback):
    """
    Monitor the loss in training.

    If the loss is NAN or INF, terminate the training.

    Note:
        If per_print_times is 0, do NOT print loss.
        If this process is MS_PSERVER role, do not run callbacks.

    Args:
        per_print_times (int): Print loss every times. Default: 1.
    """

    def __init__(self, config=None, per_print_times=1):
        super().__init__()
        if not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError("per_print_times must be in and >= 0.")
        self._per_print_times = per_print_times
        self.config = config

    def step_end(self, run_context):
        """Monitor the loss in training."""
        cb_params = run_context.original_args()
        if cb_params.net_outputs is None:
            return
        wide_loss, deep_loss = cb_params.net_outputs[0].asnumpy(), cb_params.net_outputs[1].asnumpy()
        cur_step_in_epoch = (cb_params.cur_step_num - 1) % cb_params.batch_num + 1
        cur_num = cb_params.cur_step_num
        rank_id = 0
        parallel_mode = context.get_auto_parallel_context("parallel_mode")
        if parallel_mode in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL, ParallelMode.DATA_PARALLEL):
            rank_id = get_rank()

        print("===loss===", rank_id, cb_params.cur_epoch_num, cur_step_in_epoch, wide_loss, deep_loss, flush=True)

        # raise ValueError
        if self._per_print_times != 0 and cur_num % self._per_print_times == 0 and self.config is not None:
            loss_file = open(self.config.loss_file_name, "a+")
            line = f"epoch: {cb_params.cur_epoch_num}, step: {cur_step_in_epoch}, "
            line += f"wide_loss: {wide_loss}, deep_loss: {deep_loss}"
            loss_file.write(line)
            loss_file.write("\n")
            loss_file.close()
            print(line)


class EvalCallBack(Callback):
    """
    Monitor the loss in evaluating.

    If the loss is NAN or INF, terminate evaluating.

    Note:
        If per_print_times is 0, do NOT print loss.

    Args:
        print_per_step (int): Print loss every times. Default: 1.
    """

    def __init__(self, model, eval_dataset, auc_metric, config, print_per_step=1):
        super().__init__()
        if not isinstance(print_per_step, int) or print_per_step < 0:
            raise ValueError("print_per_step must be int and >= 0.")
        self.print_per_step = print_per_step
        self.model = model
        self.eval_dataset = eval_dataset
        self.aucMetric = auc_metric
        self.aucMetric.clear()
        self.eval_file_name = config.eval_file_name
        self.eval_values = []
        self.sparse = config.sparse
        self.config = config

    def epoch_end(self, run_context):
        """
        epoch end
        """
        self.aucMetric.clear()
        parallel_mode = context.get_auto_parallel_context("parallel_mode")
        if parallel_mode in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL):
            context.set_auto_parallel_context(strategy_ckpt_save_file="", strategy_ckpt_load_file=self.config.stra_ckpt)
        rank_id = 0
        if parallel_mode in (ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL, ParallelMode.DATA_PARALLEL):
            rank_id = get_rank()
        enable_data_sink = not self.sparse
        if bool(self.config.parameter_server):
            enable_data_sink = True
        start_time = time.time()
        out = self.model.eval(self.eval_dataset, dataset_sink_mode=enable_data_sink)
        end_time = time.time()
        eval_time = int(end_time - start_time)

        time_str = time.strftime("%Y-%m-%d %H:%M%S", time.localtime())
        out_str = f"{time_str} == Rank: {rank_id} == EvalCallBack model.eval(): {out.values()}; eval_time: {eval_time}s"
        print(out_str)
        self.eval_values = out.values()
        add_write(self.eval_file_name, out_str)


# -- src/datasets.py, the MindRecord path over a GeneratorDataset of synthetic rows ------------------------------
class SyntheticCriteo:
    """Rows as the zoo's MindRecord files hold them: each row ``line_per_sample`` samples of ``field_size`` ids
    (``feat_ids``, int32), their values (``feat_vals``, float32) and labels (``label``, float32). Each id has a
    hidden weight; a sample is positive when its ids' weights, times their values, sum above 0: a linear rule in
    the ids, which the wide part learns."""

    def __init__(self, rows, line_per_sample, field_size, vocab_size, seed=0):
        rng = np.random.default_rng(seed)
        n = rows * line_per_sample
        ids = rng.integers(0, vocab_size, (n, field_size)).astype(np.int32)
        vals = rng.uniform(0.5, 1.5, (n, field_size)).astype(np.float32)
        weight = np.random.default_rng(1234).standard_normal(vocab_size)  # the same rule for every seed
        label = ((weight[ids] * vals).sum(1) > 0).astype(np.float32)
        self.ids = ids.reshape(rows, line_per_sample * field_size)
        self.vals = vals.reshape(rows, line_per_sample * field_size)
        self.label = label.reshape(rows, line_per_sample)

    def __getitem__(self, i):
        return self.ids[i], self.vals[i], self.label[i]

    def __len__(self):
        return len(self.label)


def _padding_func(batch_size, manual_shape, target_column, field_size=39):
    """
    get padding_func
    """
    if manual_shape:
        generate_concat_offset = [item[0] + item[1] for item in manual_shape]
        part_size = int(target_column / len(generate_concat_offset))
        filled_value = []
        for i in range(field_size, target_column):
            filled_value.append(generate_concat_offset[i // part_size] - 1)
        print("Filed Value:", filled_value)

        def padding_func(x, y, z):
            x = np.array(x).flatten().reshape(batch_size, field_size)
            y = np.array(y).flatten().reshape(batch_size, field_size)
            z = np.array(z).flatten().reshape(batch_size, 1)

            x_id = np.ones((batch_size, target_column - field_size), dtype=np.int32) * filled_value
            x_id = np.concatenate([x, x_id.astype(dtype=np.int32)], axis=1)
            mask = np.concatenate([y, np.zeros((batch_size, target_column - 39), dtype=np.float32)], axis=1)
            return (x_id, mask, z)
    else:

        def padding_func(x, y, z):
            x = np.array(x).flatten().reshape(batch_size, field_size)
            y = np.array(y).flatten().reshape(batch_size, field_size)
            z = np.array(z).flatten().reshape(batch_size, 1)
            return (x, y, z)

    return padding_func


def create_dataset(source, train_mode=True, batch_size=1000, line_per_sample=1000, field_size=39):
    """_get_mindrecord_dataset with ``ds.MindDataset(...)`` replaced by a GeneratorDataset over ``source``."""
    shuffle = train_mode
    data_set = ds.GeneratorDataset(source, column_names=["feat_ids", "feat_vals", "label"], shuffle=shuffle)
    data_set = data_set.batch(int(batch_size / line_per_sample), drop_remainder=True)
    data_set = data_set.map(
        _padding_func(batch_size, None, None, field_size),
        input_columns=["feat_ids", "feat_vals", "label"],
        num_parallel_workers=2,
    )
    return data_set


def get_WideDeep_net(config):
    """
    Get network of wide&deep model (train_and_eval.py).
    """
    WideDeep_net = WideDeepModel(config)

    loss_net = NetWithLossClass(WideDeep_net, config)
    train_net = TrainStepWrap(loss_net, sparse=config.sparse)
    eval_net = PredictWithSigmoid(WideDeep_net)

    return train_net, eval_net
