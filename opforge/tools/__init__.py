"""Tools built on the library: the ``opforge`` command line, the benchmark suite, the demo and the
profiler of primitive calls."""
