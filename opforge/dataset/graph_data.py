"""MindSpore's ``mindspore.dataset.GraphData``: a graph read from the MindRecord files that the model zoo's graph
converter (``utils/graph_to_mindrecord``: ``writer.py`` with ``graph_map_schema.py``) writes, for the GNN
programs (GCN, GAT, BGCF) to query: its nodes and edges by type, neighbours (all of them, or sampled), negative
samples, node and edge features, and random walks.

The file format. Every row is a node or an edge, told by its ``attribute`` field ('n' or 'e'): ``first_id`` is
the node's (or the edge's) id, ``type`` its type; an edge's ``second_id`` and ``third_id`` are its source and
destination node, its ``weight`` the weight ``SamplingStrategy.EDGE_WEIGHT`` samples by. ``node_feature_index``
(``edge_feature_index``) lists the feature numbers k that the row holds in its field ``node_feature_k``
(``edge_feature_k``), -1 for none; a feature is read as a flat 1-D array of its field's type. A feature number
that a node (edge) lacks reads as zeros shaped as the first such feature read.

The graph as MindSpore's engine holds it: edges are directed (from ``second_id`` to ``third_id``); a node's
neighbours are kept per neighbour *node type*, in the order of the edges in the files, and ``neighbor_type`` /
``neg_neighbor_type`` / ``meta_path`` name node types. Node ids are given back as int32 arrays; as MindSpore's
engine, every result is squeezed (each dimension of size 1 dropped: ``get_all_neighbors([v], t)`` of one node
is 1-D, a 0-d array when ``v`` has no neighbour of type ``t``); -1 stands for "no node" (padding).

Sampling (``get_sampled_neighbors``, ``get_neg_sampled_neighbors``, ``random_walk``) draws from one generator per
``GraphData``, seeded when it is made from ``opforge.dataset.config.set_seed``'s seed (``opforge.set_seed`` sets
it too), from the operating system's entropy when no seed is set: the same seed, the same graph and the same
calls give the same samples.

Only ``working_mode='local'`` (the graph read into this process) exists: MindSpore's graph server and its
clients ('server', 'client') raise ``NotImplementedError``.
"""

from __future__ import annotations

import os
import re
from enum import IntEnum
from os import cpu_count

import numpy as np

from opforge import log as logger
from opforge.dataset import config
from opforge.mindrecord.filereader import ShardSet
from opforge.mindrecord.shard_format import MindRecordError

__all__ = ["GraphData", "SamplingStrategy", "OutputFormat"]

_NO_NODE = -1  # MindSpore's kDefaultNodeId: padding, "no such node"
_MAX_HOPS = 6
_MAX_WALK = 80  # MindSpore's kMaxNumWalks: the longest meta path
_EPSILON = 0.0001  # MindSpore's kGnnEpsilon: the smallest step_home_param / step_away_param
_INT32_MAX = 2**31 - 1
_KEYS = ("first_id", "second_id", "third_id", "attribute", "type", "node_feature_index", "edge_feature_index")
_HOSTNAME_PART = re.compile(r"(?!-)[A-Z\d-]{1,63}(?<!-)$", re.IGNORECASE)


class SamplingStrategy(IntEnum):
    """How ``GraphData.get_sampled_neighbors`` draws: ``RANDOM`` shuffles a node's neighbours and takes the
    first ones (again, for more samples than neighbours), ``EDGE_WEIGHT`` draws with replacement, each
    neighbour in proportion to its edge's weight."""

    RANDOM = 0
    EDGE_WEIGHT = 1


class OutputFormat(IntEnum):
    """How ``GraphData.get_all_neighbors`` lays out its result: ``NORMAL`` (a row per node: the node, its
    neighbours, -1 padding), ``COO`` (a row per (node, neighbour) pair), ``CSR`` (each node's offset into the
    flat neighbour array, and that array)."""

    NORMAL = 0
    COO = 1
    CSR = 2


# -- argument checks (MindSpore's validators: TypeError for a wrong type, ValueError for a wrong value) ----------
def _names(types) -> str:
    return " or ".join(t.__name__ for t in types)


def _type_check(where: str, value, types, name: str) -> None:
    if (isinstance(value, bool) and bool not in types) or not isinstance(value, types):
        raise TypeError(f"For '{where}', the '{name}' must be {_names(types)}, but got {type(value).__name__}.")


def _id_list(where: str, value, name: str) -> np.ndarray:
    """A list of ints or an int32 ndarray (MindSpore's check_gnn_list_or_ndarray), as a 1-D int64 array."""
    _type_check(where, value, (list, np.ndarray), name)
    if isinstance(value, list):
        for k, member in enumerate(value):
            if isinstance(member, bool) or not isinstance(member, int):
                raise TypeError(
                    f"For '{where}', each member of '{name}' must be an int, but {name}[{k}] is "
                    f"{type(member).__name__}."
                )
        return np.array(value, dtype=np.int64).reshape(-1)
    if value.dtype != np.int32:
        raise TypeError(f"For '{where}', the '{name}' array must be int32, but got {value.dtype}.")
    if value.ndim != 1:
        raise TypeError(f"For '{where}', the '{name}' array must be 1-D, but got shape {value.shape}.")
    return value.astype(np.int64)


def _aligned_list(where: str, value, name: str) -> None:
    """A (nested) list of ints whose members at each level are all lists of one length or all ints."""
    if not value:
        raise TypeError(f"For '{where}', the '{name}' or one of its members is empty.")
    nested = [isinstance(m, list) for m in value]
    if any(nested) and not all(nested):
        raise TypeError(f"For '{where}', the members of '{name}' mix lists and ints.")
    if all(nested):
        if len({len(m) for m in value}) != 1:
            raise TypeError(f"For '{where}', the members of '{name}' are lists of different lengths.")
        for member in value:
            _aligned_list(where, member, name)
        return
    for member in value:
        if isinstance(member, bool) or not isinstance(member, int):
            raise TypeError(f"For '{where}', each member of '{name}' must be an int, but got {type(member).__name__}.")


def _id_array(where: str, value, name: str) -> np.ndarray:
    """get_node_feature's / get_edge_feature's ids: an aligned nested list of ints or an int32 array of any
    shape (the features come back in that shape, each id's feature appended)."""
    _type_check(where, value, (list, np.ndarray), name)
    if isinstance(value, list):
        _aligned_list(where, value, name)
        return np.array(value, dtype=np.int64)
    if value.dtype != np.int32:
        raise TypeError(f"For '{where}', the '{name}' array must be int32, but got {value.dtype}.")
    return value.astype(np.int64)


def _check_hostname(hostname: str) -> bool:
    if not hostname or len(hostname) > 255:
        return False
    hostname = hostname[:-1] if hostname.endswith(".") else hostname
    return all(_HOSTNAME_PART.match(part) for part in hostname.split("."))


def _squeezed(rows) -> np.ndarray:
    """MindSpore's engine's result tensor: int32, every dimension of size 1 dropped."""
    return np.squeeze(np.asarray(rows, dtype=np.int32))


def _flat_feature(spec: dict, value, field: str) -> np.ndarray:
    if spec["type"] in ("string", "bytes"):
        raise RuntimeError(f"For 'GraphData', the feature field '{field}' is {spec['type']}: features are numbers.")
    return np.asarray(value, dtype=spec["type"]).reshape(-1)


class _Node:
    __slots__ = ("id", "type", "features", "neighbors", "adjacent")

    def __init__(self, node_id: int, node_type: int):
        self.id, self.type = node_id, node_type
        self.features = {}  # feature number -> 1-D array
        self.neighbors = {}  # neighbour node type -> ([ids], [edge weights]), in edge order
        self.adjacent = {}  # destination id -> the first edge's id


class _Edge:
    __slots__ = ("id", "type", "src", "dst", "weight", "features")

    def __init__(self, edge_id: int, edge_type: int, src: int, dst: int, weight: float):
        self.id, self.type, self.src, self.dst, self.weight = edge_id, edge_type, src, dst, weight
        self.features = {}


class GraphData:
    """MindSpore's ``GraphData(dataset_file, num_parallel_workers=None, working_mode='local',
    hostname='127.0.0.1', port=50051, num_client=1, auto_shutdown=True)``: the graph of the MindRecord dataset
    that ``dataset_file`` (one of its files) belongs to, read into memory. ``num_parallel_workers`` (1 to the
    CPU count) is checked and kept: the files are read in this thread, in their order. ``hostname``, ``port``
    (1024-65535), ``num_client`` (1-255) and ``auto_shutdown`` are checked as MindSpore checks them; they
    configure the graph server, which opforge does not have ('client' and 'server' raise NotImplementedError).

    Raises: TypeError / ValueError for arguments of the wrong type / value (``dataset_file`` missing: ValueError),
    RuntimeError for files that are not a graph dataset (a field of the converter's schema missing, an edge
    naming a node that is not in the files)."""

    def __init__(self, dataset_file, num_parallel_workers=None, working_mode="local", hostname="127.0.0.1",
                 port=50051, num_client=1, auto_shutdown=True):  # fmt: skip
        where = "GraphData"
        _type_check(where, dataset_file, (str,), "dataset_file")
        if not os.path.isfile(os.path.realpath(dataset_file)) or not os.access(dataset_file, os.R_OK):
            raise ValueError(f"For '{where}', the file '{dataset_file}' does not exist or cannot be read.")
        if num_parallel_workers is not None:
            _type_check(where, num_parallel_workers, (int,), "num_parallel_workers")
            if not 1 <= num_parallel_workers <= (cpu_count() or 1):
                raise ValueError(
                    f"For '{where}', the 'num_parallel_workers' must be in [1, {cpu_count()}], but got "
                    f"{num_parallel_workers}."
                )
        _type_check(where, hostname, (str,), "hostname")
        if not _check_hostname(hostname):
            raise ValueError(f"For '{where}', the 'hostname' {hostname!r} is not a valid host name.")
        _type_check(where, working_mode, (str,), "working_mode")
        if working_mode not in ("local", "client", "server"):
            raise ValueError(
                f"For '{where}', the 'working_mode' must be 'local', 'client' or 'server', but got {working_mode!r}."
            )
        _type_check(where, port, (int,), "port")
        if not 1024 <= port <= 65535:
            raise ValueError(f"For '{where}', the 'port' must be in [1024, 65535], but got {port}.")
        _type_check(where, num_client, (int,), "num_client")
        if not 1 <= num_client <= 255:
            raise ValueError(f"For '{where}', the 'num_client' must be in [1, 255], but got {num_client}.")
        _type_check(where, auto_shutdown, (bool,), "auto_shutdown")
        if working_mode != "local":
            raise NotImplementedError(
                f"For '{where}', the working_mode {working_mode!r} (MindSpore's distributed graph server and its "
                "clients) is not available in opforge: use 'local', which reads the graph into this process."
            )
        self._dataset_file = dataset_file
        self._working_mode = working_mode
        self._num_parallel_workers = 1 if num_parallel_workers is None else num_parallel_workers
        self.data_format = "mindrecord"
        seed = config.get_seed()
        self._rng = np.random.default_rng(seed)
        self._nodes = {}  # id -> _Node
        self._nodes_of_type = {}  # node type -> [ids], file order
        self._edges = {}  # id -> _Edge
        self._edges_of_type = {}
        self._node_default = {}  # feature number -> zeros (the first such feature's shape and type)
        self._edge_default = {}
        self._node_feature_types = set()
        self._edge_feature_types = set()
        self._load(dataset_file)

    # -- reading the files -------------------------------------------------------------------------------------
    def _load(self, dataset_file: str) -> None:
        try:
            shards = ShardSet("GraphData", dataset_file)
        except MindRecordError as e:
            raise RuntimeError(f"For 'GraphData', the file '{dataset_file}' cannot be read as MindRecord: {e}") from e
        try:
            schema = shards.schema
            missing = [k for k in _KEYS if k not in schema]
            if missing:
                raise RuntimeError(
                    f"For 'GraphData', the fields {missing} are not in the schema {sorted(schema)} of '{dataset_file}':"
                    " a graph dataset has the schema of the model zoo's graph converter (graph_map_schema.py)."
                )
            edges = []
            for shard, count in enumerate(shards.shard_lengths()):
                for row in range(count):
                    record = shards.read(shard, row)
                    attribute = record["attribute"]
                    if attribute == "n":
                        self._add_node(schema, record)
                    elif attribute == "e":
                        edges.append(self._edge(schema, record))
                    else:
                        logger.warning("GraphData: the row %d of '%s' has attribute %r, neither node ('n') nor edge "
                                       "('e'): skipped.", row, shards.paths[shard], attribute)  # fmt: skip
        finally:
            shards.close()
        for edge in edges:  # as MindSpore's loader: every node first, then the edges
            for end in (edge.src, edge.dst):
                if end not in self._nodes:
                    raise RuntimeError(
                        f"For 'GraphData', the edge {edge.id} of '{dataset_file}' joins the node {end}, which is not "
                        "in the dataset."
                    )
            self._edges.setdefault(edge.id, edge)
            self._edges_of_type.setdefault(edge.type, []).append(edge.id)
            src, dst = self._nodes[edge.src], self._nodes[edge.dst]
            ids, weights = src.neighbors.setdefault(dst.type, ([], []))
            ids.append(dst.id)
            weights.append(edge.weight)
            src.adjacent.setdefault(dst.id, edge.id)

    def _features(self, schema: dict, record: dict, prefix: str, defaults: dict, kinds: set) -> dict:
        out = {}
        for k in np.asarray(record[f"{prefix}_index"]).reshape(-1).tolist():
            if k < 0:
                continue
            field = f"{prefix}_{k}"
            if field not in schema:
                raise RuntimeError(f"For 'GraphData', a row lists the feature {k}, but the schema has no '{field}'.")
            value = _flat_feature(schema[field], record[field], field)
            out[k] = value
            kinds.add(k)
            defaults.setdefault(k, np.zeros_like(value))
        return out

    def _add_node(self, schema: dict, record: dict) -> None:
        node = _Node(int(record["first_id"]), int(record["type"]))
        node.features = self._features(schema, record, "node_feature", self._node_default, self._node_feature_types)
        self._nodes.setdefault(node.id, node)
        self._nodes_of_type.setdefault(node.type, []).append(node.id)

    def _edge(self, schema: dict, record: dict) -> _Edge:
        weight = float(record["weight"]) if "weight" in record else 1.0
        edge = _Edge(int(record["first_id"]), int(record["type"]), int(record["second_id"]),
                     int(record["third_id"]), weight)  # fmt: skip
        edge.features = self._features(schema, record, "edge_feature", self._edge_default, self._edge_feature_types)
        return edge

    # -- lookups ---------------------------------------------------------------------------------------------------
    def _node(self, where: str, node_id: int) -> _Node:
        node = self._nodes.get(int(node_id))
        if node is None:
            raise RuntimeError(f"For '{where}', the node id {int(node_id)} is not in the graph.")
        return node

    def _check_node_type(self, where: str, node_type: int, name: str) -> None:
        if int(node_type) not in self._nodes_of_type:
            raise RuntimeError(
                f"For '{where}', the {name} {int(node_type)} is not a node type of the graph "
                f"{sorted(self._nodes_of_type)}."
            )

    def _check_samples(self, where: str, count: int, name: str) -> None:
        total = sum(len(ids) for ids in self._nodes_of_type.values())
        if not 1 <= count <= total:
            raise RuntimeError(f"For '{where}', the {name} must be in [1, {total}] (the nodes), but got {count}.")

    @staticmethod
    def _not_empty(where: str, ids: np.ndarray, name: str) -> None:
        if ids.size == 0:
            raise RuntimeError(f"For '{where}', the '{name}' is empty.")

    # -- MindSpore's API ------------------------------------------------------------------------------------------
    def get_all_nodes(self, node_type):
        """The ids of the nodes of type ``node_type`` (an int), in the files' order: an int32 array."""
        where = "GraphData.get_all_nodes"
        _type_check(where, node_type, (int,), "node_type")
        if node_type not in self._nodes_of_type:
            raise RuntimeError(
                f"For '{where}', the node type {node_type} is not in the graph {sorted(self._nodes_of_type)}."
            )
        return _squeezed([self._nodes_of_type[node_type]])

    def get_all_edges(self, edge_type):
        """The ids of the edges of type ``edge_type`` (an int), in the files' order: an int32 array."""
        where = "GraphData.get_all_edges"
        _type_check(where, edge_type, (int,), "edge_type")
        if edge_type not in self._edges_of_type:
            raise RuntimeError(
                f"For '{where}', the edge type {edge_type} is not in the graph {sorted(self._edges_of_type)}."
            )
        return _squeezed([self._edges_of_type[edge_type]])

    def get_nodes_from_edges(self, edge_list):
        """Each edge's (source, destination): an int32 array [len(edge_list), 2]."""
        where = "GraphData.get_nodes_from_edges"
        ids = _id_list(where, edge_list, "edge_list")
        self._not_empty(where, ids, "edge_list")
        rows = []
        for edge_id in ids.tolist():
            edge = self._edges.get(edge_id)
            if edge is None:
                raise RuntimeError(f"For '{where}', the edge id {edge_id} is not in the graph.")
            rows.append((edge.src, edge.dst))
        return _squeezed(rows)

    def get_edges_from_nodes(self, node_list):
        """The id of the edge from each pair's first node to its second (``node_list``: a list of (src, dst)
        tuples or an int32 array [n, 2]), -1 (with a warning) where there is none: an int32 array."""
        where = "GraphData.get_edges_from_nodes"
        _type_check(where, node_list, (list, np.ndarray), "node_list")
        if isinstance(node_list, list):
            for k, pair in enumerate(node_list):
                _type_check(where, pair, (tuple,), f"node_list[{k}]")
                if len(pair) != 2:
                    raise ValueError(f"For '{where}', node_list[{k}] must be a pair, but has {len(pair)} members.")
                for member in pair:
                    _type_check(where, member, (int,), f"node_list[{k}]'s members")
            pairs = [tuple(p) for p in node_list]
        else:
            if node_list.ndim != 2:
                raise ValueError(f"For '{where}', the 'node_list' array must be 2-D, but has {node_list.ndim} dims.")
            if node_list.shape[1] != 2:
                raise ValueError(
                    f"For '{where}', the 'node_list' array's rows must be pairs, but has {node_list.shape[1]}."
                )
            if node_list.dtype != np.int32:
                raise TypeError(f"For '{where}', the 'node_list' array must be int32, but got {node_list.dtype}.")
            pairs = [tuple(p) for p in node_list.tolist()]
        if not pairs:
            raise RuntimeError(f"For '{where}', the 'node_list' is empty.")
        out = []
        for src, dst in pairs:
            edge_id = self._node(where, src).adjacent.get(int(dst))
            if edge_id is None:
                logger.warning("GraphData: the node %d is not adjacent to the node %d.", dst, src)
                edge_id = _NO_NODE
            out.append([edge_id])
        return _squeezed(out)

    @staticmethod
    def _neighbors(node: _Node, neighbor_type: int):
        return node.neighbors.get(neighbor_type, ([], []))

    def get_all_neighbors(self, node_list, neighbor_type, output_format=OutputFormat.NORMAL):
        """The neighbours of type ``neighbor_type`` of each node of ``node_list``, in the order of their edges.
        ``OutputFormat.NORMAL``: an int32 array [len(node_list), 1 + most neighbours], each row the node then its
        neighbours, -1 after them; ``COO``: [pairs, 2], a (node, neighbour) row per neighbour; ``CSR``: a tuple
        (offsets, neighbours): each node's first index in the flat int32 neighbour array."""
        where = "GraphData.get_all_neighbors"
        ids = _id_list(where, node_list, "node_list")
        _type_check(where, neighbor_type, (int,), "neighbor_type")
        if not isinstance(output_format, OutputFormat):
            raise TypeError(
                f"For '{where}', the 'output_format' must be an OutputFormat, but got {type(output_format).__name__}."
            )
        self._not_empty(where, ids, "node_list")
        self._check_node_type(where, neighbor_type, "neighbor_type")
        lists = [(int(v), self._neighbors(self._node(where, v), neighbor_type)[0]) for v in ids.tolist()]
        if output_format == OutputFormat.COO:
            return _squeezed(np.array([(v, u) for v, found in lists for u in found], np.int64).reshape(-1, 2))
        if output_format == OutputFormat.CSR:
            counts = [len(found) for _, found in lists]
            offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int32)
            flat = np.array([u for _, found in lists for u in found], dtype=np.int32)
            return offsets, flat
        width = 1 + max(len(found) for _, found in lists)
        return _squeezed([[v, *found] + [_NO_NODE] * (width - 1 - len(found)) for v, found in lists])

    def _sample(self, node: _Node, neighbor_type: int, count: int, strategy: SamplingStrategy) -> list:
        ids, weights = self._neighbors(node, neighbor_type)
        if not ids:
            return [_NO_NODE] * count
        if strategy == SamplingStrategy.EDGE_WEIGHT:
            w = np.asarray(weights, dtype=np.float64)
            if (w < 0).any() or not np.isfinite(w).all():
                raise RuntimeError(
                    f"For 'GraphData.get_sampled_neighbors', the node {node.id}'s edge weights {weights} are not all "
                    "finite and >= 0."
                )
            p = w / w.sum() if w.sum() > 0 else None
            return [ids[k] for k in self._rng.choice(len(ids), size=count, p=p).tolist()]
        out = []
        while len(out) < count:  # a shuffle's first ones; another shuffle for more samples than neighbours
            order = self._rng.permutation(len(ids))[: count - len(out)]
            out.extend(ids[k] for k in order.tolist())
        return out

    def get_sampled_neighbors(self, node_list, neighbor_nums, neighbor_types, strategy=SamplingStrategy.RANDOM):
        """Multi-hop neighbour sampling (1 to 6 hops): hop i draws ``neighbor_nums[i]`` neighbours of type
        ``neighbor_types[i]`` for every node of hop i - 1 (-1 for a node with none of that type, and for each
        sample of a -1). An int32 array [len(node_list), 1 + n1 + n1*n2 + ...]: each row the node, then its
        hops' samples in turn. ``strategy``: ``SamplingStrategy.RANDOM`` (a random order of the neighbours,
        repeated while more are asked for) or ``EDGE_WEIGHT`` (with replacement, by edge weight)."""
        where = "GraphData.get_sampled_neighbors"
        ids = _id_list(where, node_list, "node_list")
        nums = _id_list(where, neighbor_nums, "neighbor_nums").tolist()
        if not nums or len(nums) > _MAX_HOPS:
            raise ValueError(
                f"For '{where}', the 'neighbor_nums' must have 1 to {_MAX_HOPS} members, but has {len(nums)}."
            )
        types = _id_list(where, neighbor_types, "neighbor_types").tolist()
        if not types or len(types) > _MAX_HOPS:
            raise ValueError(
                f"For '{where}', the 'neighbor_types' must have 1 to {_MAX_HOPS} members, but has {len(types)}."
            )
        if len(nums) != len(types):
            raise ValueError(f"For '{where}', the 'neighbor_nums' and 'neighbor_types' must be of one length.")
        if not isinstance(strategy, SamplingStrategy):
            raise TypeError(
                f"For '{where}', the 'strategy' must be a SamplingStrategy, but got {type(strategy).__name__}."
            )
        self._not_empty(where, ids, "node_list")
        for count in nums:
            self._check_samples(where, count, "neighbor_nums member")
        for t in types:
            self._check_node_type(where, t, "neighbor_types member")
        rows = []
        for v in ids.tolist():
            self._node(where, v)
            row, frontier = [v], [v]
            for count, t in zip(nums, types):
                hop = []
                for u in frontier:
                    if u == _NO_NODE:
                        hop.extend([_NO_NODE] * count)
                    else:
                        hop.extend(self._sample(self._node(where, u), t, count, strategy))
                row.extend(hop)
                frontier = hop
            rows.append(row)
        return _squeezed(rows)

    def get_neg_sampled_neighbors(self, node_list, neg_neighbor_num, neg_neighbor_type):
        """For each node, ``neg_neighbor_num`` nodes of type ``neg_neighbor_type`` that are neither the node nor
        its neighbours, drawn (as MindSpore's engine) along one random order of that type's nodes that the
        nodes of ``node_list`` consume in turn, shuffled anew when used up; -1s for a node with no such node.
        An int32 array [len(node_list), 1 + neg_neighbor_num]: each row the node, then its samples."""
        where = "GraphData.get_neg_sampled_neighbors"
        ids = _id_list(where, node_list, "node_list")
        _type_check(where, neg_neighbor_num, (int,), "neg_neighbor_num")
        _type_check(where, neg_neighbor_type, (int,), "neg_neighbor_type")
        self._not_empty(where, ids, "node_list")
        self._check_samples(where, neg_neighbor_num, "neg_neighbor_num")
        self._check_node_type(where, neg_neighbor_type, "neg_neighbor_type")
        pool = self._nodes_of_type[neg_neighbor_type]
        order, at = self._rng.permutation(len(pool)).tolist(), 0
        rows = []
        for v in ids.tolist():
            node = self._node(where, v)
            exclude = {node.id, *self._neighbors(node, neg_neighbor_type)[0]}
            row = [node.id]
            if any(u not in exclude for u in pool):
                while len(row) < neg_neighbor_num + 1:
                    candidate = pool[order[at]]
                    at += 1
                    if candidate not in exclude:
                        row.append(candidate)
                    if at == len(order):
                        order, at = self._rng.permutation(len(pool)).tolist(), 0
            else:
                row.extend([_NO_NODE] * neg_neighbor_num)
            rows.append(row)
        return _squeezed(rows)

    def _features_of(self, where, ids, feature_types, items: dict, defaults: dict, what: str) -> list:
        kinds = _id_list(where, feature_types, "feature_types").tolist()
        if ids.size == 0:
            raise RuntimeError(f"For '{where}', the '{what}_list' is empty.")
        if not kinds:
            raise RuntimeError(f"For '{where}', the 'feature_types' is empty.")
        out = []
        for kind in kinds:
            default = defaults.get(kind)
            if default is None:
                raise RuntimeError(f"For '{where}', the feature type {kind} is not a {what} feature of the graph "
                                   f"{sorted(defaults)}.")  # fmt: skip
            values = np.empty((ids.size,) + default.shape, dtype=default.dtype)
            for k, item_id in enumerate(ids.reshape(-1).tolist()):
                if item_id == _NO_NODE:
                    values[k] = default
                    continue
                item = items.get(item_id)
                if item is None:
                    raise RuntimeError(f"For '{where}', the {what} id {item_id} is not in the graph.")
                value = item.features.get(kind, default)
                if value.shape != default.shape:
                    raise RuntimeError(
                        f"For '{where}', the {what} {item_id}'s feature {kind} has {value.size} values, the others "
                        f"{default.size}: the features of one type must be of one length."
                    )
                values[k] = value
            out.append(np.squeeze(values.reshape(ids.shape + default.shape)))
        return out

    def get_node_feature(self, node_list, feature_types):
        """The features ``feature_types`` (feature numbers) of the nodes of ``node_list`` (a list, nested lists,
        or an int32 array of any shape): a list with an array per feature type, ``node_list``'s shape then the
        feature's, squeezed; a -1 id (padding) or a node without the feature reads zeros."""
        where = "GraphData.get_node_feature"
        ids = _id_array(where, node_list, "node_list")
        return self._features_of(where, ids, feature_types, self._nodes, self._node_default, "node")

    def get_edge_feature(self, edge_list, feature_types):
        """The features ``feature_types`` of the edges of ``edge_list``, as ``get_node_feature``'s."""
        where = "GraphData.get_edge_feature"
        ids = _id_array(where, edge_list, "edge_list")
        return self._features_of(where, ids, feature_types, self._edges, self._edge_default, "edge")

    def graph_info(self):
        """The graph's meta information: a dict with ``node_type`` and ``edge_type`` (sorted lists),
        ``node_num`` and ``edge_num`` ({type: count}), ``node_feature_type`` and ``edge_feature_type`` (sorted
        lists of the feature numbers)."""
        return {
            "node_type": sorted(self._nodes_of_type),
            "edge_type": sorted(self._edges_of_type),
            "node_num": {t: len(self._nodes_of_type[t]) for t in sorted(self._nodes_of_type)},
            "edge_num": {t: len(self._edges_of_type[t]) for t in sorted(self._edges_of_type)},
            "node_feature_type": sorted(self._node_feature_types),
            "edge_feature_type": sorted(self._edge_feature_types),
        }

    def _walk(self, start: int, meta_path: list, home: float, away: float, default_node: int) -> list:
        walk = [start]
        while len(walk) - 1 < len(meta_path):
            step = len(walk) - 1
            current = self._nodes[walk[-1]]
            choices = sorted(self._neighbors(current, meta_path[step])[0])
            if not choices:
                break
            if step == 0:
                weights = np.ones(len(choices))
            else:  # node2vec: back to the previous node 1/p, to a node next to it 1, farther away 1/q
                previous = walk[-2]
                near = set(self._neighbors(self._nodes[previous], meta_path[step - 1])[0])
                weights = np.array([1.0 / home if u == previous else 1.0 if u in near else 1.0 / away for u in choices])
            walk.append(choices[int(self._rng.choice(len(choices), p=weights / weights.sum()))])
        return walk + [default_node] * (len(meta_path) + 1 - len(walk))

    def random_walk(self, target_nodes, meta_path, step_home_param=1.0, step_away_param=1.0, default_node=-1):
        """A node2vec walk from each node of ``target_nodes``: step i goes to a neighbour of type
        ``meta_path[i]`` (1 to 80 steps), the first step uniformly, later ones weighting a return to the
        previous node by 1 / ``step_home_param``, a neighbour of the previous node by 1 and any other by
        1 / ``step_away_param``; a walk that reaches a node without such neighbours ends, ``default_node``
        filling the rest. An int32 array [len(target_nodes), len(meta_path) + 1]."""
        where = "GraphData.random_walk"
        ids = _id_list(where, target_nodes, "target_nodes")
        path = _id_list(where, meta_path, "meta_path").tolist()
        _type_check(where, step_home_param, (float,), "step_home_param")
        _type_check(where, step_away_param, (float,), "step_away_param")
        _type_check(where, default_node, (int,), "default_node")
        if not -1 <= default_node <= _INT32_MAX:
            raise ValueError(
                f"For '{where}', the 'default_node' must be in [-1, {_INT32_MAX}], but got {default_node}."
            )
        self._not_empty(where, ids, "target_nodes")
        if not 1 <= len(path) <= _MAX_WALK:
            raise RuntimeError(
                f"For '{where}', the 'meta_path' must have 1 to {_MAX_WALK} members, but has {len(path)}."
            )
        for t in path:
            self._check_node_type(where, t, "meta_path member")
        if step_home_param < _EPSILON or step_away_param < _EPSILON:
            raise RuntimeError(
                f"For '{where}', the 'step_home_param' and 'step_away_param' must be >= {_EPSILON}, but got "
                f"{step_home_param} and {step_away_param}."
            )
        walks = []
        for v in ids.tolist():
            walks.append(self._walk(self._node(where, v).id, path, step_home_param, step_away_param, default_node))
        return _squeezed(walks)
