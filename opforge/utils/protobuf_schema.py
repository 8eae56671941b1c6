"""Protobuf message classes built at import from a compact schema, with the ``protobuf`` runtime and no generated
``_pb2`` module: the MindSpore file formats opforge reads and writes (checkpoints: opforge/nn/checkpoint_proto.py;
strategy files: opforge/dispatch/strategy_file.py; summary events: opforge/train/summary.py).

``message_classes(file_name, package, messages)`` takes ``{message name: [(field, number, label, type), ...]}``,
proto2: ``label`` is "optional", "required" or "repeated"; ``type`` a scalar type name ("int64", "string",
"bytes", "double", ...) or another message's name from the same schema. A dotted name ("Checkpoint.Value") is a
nested message. Returns ``{message name: class}``.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["message_classes"]

_F = descriptor_pb2.FieldDescriptorProto
_LABELS = {"optional": _F.LABEL_OPTIONAL, "required": _F.LABEL_REQUIRED, "repeated": _F.LABEL_REPEATED}
_SCALARS = {
    name: getattr(_F, "TYPE_" + name.upper())
    for name in ("double", "float", "int32", "int64", "uint32", "uint64", "bool", "string", "bytes")
}


def message_classes(file_name: str, package: str, messages: dict) -> dict:
    fdp = descriptor_pb2.FileDescriptorProto(name=file_name, package=package, syntax="proto2")
    protos = {}
    for name in messages:  # parents before their nested messages
        parent, _, short = name.rpartition(".")
        container = protos[parent].nested_type if parent else fdp.message_type
        protos[name] = container.add(name=short)
    prefix = f".{package}." if package else "."
    for name, fields in messages.items():
        for field, number, label, kind in fields:
            entry = protos[name].field.add(name=field, number=number, label=_LABELS[label])
            if kind in _SCALARS:
                entry.type = _SCALARS[kind]
            else:
                entry.type, entry.type_name = _F.TYPE_MESSAGE, prefix + kind
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    full = f"{package}." if package else ""
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(full + name)) for name in messages}
