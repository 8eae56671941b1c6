"""Utilities: ``opforge.utils.cpp_extension`` compiles kernel libraries for operator authors;
``opforge.utils.protobuf_schema`` builds the message classes of MindSpore's file formats."""
