"""The ``opforge`` command: ``ops`` (the operator table), ``doctor`` (registry consistency; ``--import MODULE``
checks a user's operators too), ``demo`` (train an MLP on digits) and ``bench`` (opforge vs NumPy vs PyTorch)."""

from __future__ import annotations

import argparse
import difflib
import importlib
import importlib.util
import os
import pathlib
import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

import opforge
from opforge.bprop import bprop_getters
from opforge.kernels import registry
from opforge.op_info import all_op_infos
from opforge.op_info.reg_op import format_signature, kernel_signature
from opforge.ops.custom import FUNC_TYPES as CUSTOM_KINDS  # the kernel kinds of ops.Custom: one per func_type
from opforge.primitives import primitive_classes
from opforge.tools.op_reference import describe_kernels

__all__ = ["main", "doctor_problems"]


def _kernel_rows() -> list:
    rows = {}
    for e in registry.all_kernels(include_disabled=True):
        rows.setdefault((e.op_name, e.backend), []).append(e)
    return sorted(rows.items())


def _matching_ops(wanted: str, names) -> list:
    """The operator names equal to ``wanted`` ignoring case (``relu`` is ``ReLU``)."""
    return [n for n in names if n.lower() == wanted.lower()]


def _closest_ops(wanted: str, names) -> list:
    by_lower = {n.lower(): n for n in names}
    return [by_lower[m] for m in difflib.get_close_matches(wanted.lower(), list(by_lower), n=3, cutoff=0.6)]


def cmd_ops(args) -> int:
    """Print every operator x backend with its kernel dtype signatures (exit 1 when ``--op`` matches none)."""
    console = Console()
    if getattr(args, "imports", None) and _import_modules(args.imports, console) is None:
        return 1
    rows = _kernel_rows()
    wanted = None
    if args.op:
        names = sorted({op for (op, _), _ in rows})
        wanted = set(_matching_ops(args.op, names))
        if not wanted:
            close = _closest_ops(args.op, names)
            hint = f"; did you mean {' or '.join(close)}?" if close else "; `opforge ops` lists them all"
            console.print(f"[bold red]error:[/bold red] no operator named {escape(args.op)!r} has a kernel{hint}")
            return 1
    table = Table(title=f"opforge {opforge.__version__}: operators x backends x dtypes")
    table.add_column("Operator", style="bold cyan")
    table.add_column("Backend")
    table.add_column("Signature")
    table.add_column("dtypes")
    table.add_column("Impl", style="dim")
    shown = 0
    for (op, backend), entries in rows:
        if wanted is not None and op not in wanted:
            continue
        pattern, dtypes = describe_kernels(entries)
        table.add_row(
            op, backend, pattern, dtypes, _impl(entries, len(entries) - len(registry.kernels_for(op, backend)))
        )
        shown += 1
    console.print(table)
    n_kernels = len(registry.all_kernels(include_disabled=True))
    n_disabled = n_kernels - len(registry.all_kernels())
    n_primitives = len({op for (op, _), _ in rows} & set(primitive_classes()))
    console.print(
        f"{n_primitives} primitives with kernels, {shown} operator/backend pairs, {n_kernels} kernels."
        + (f" {n_disabled} disabled." if n_disabled else "")
    )
    return 0


def _impl(entries, n_disabled: int) -> str:
    """The kinds of kernel ("cpp", "python"), and how many are disabled when some are."""
    text = ", ".join(sorted({e.kind for e in entries}))
    return text + (f" ({n_disabled} disabled)" if n_disabled else "")


def doctor_problems() -> list:
    """Every disagreement between op info, kernels (disabled ones too) and primitives, as readable lines.

    Registration refuses a kernel its op info does not declare, so "not declared" appears only for
    tables built around the registry's checks; an op info row without a kernel is allowed but reported.
    """
    problems = []
    kernels = {}
    for e in registry.all_kernels(include_disabled=True):
        if e.kind in CUSTOM_KINDS:  # an ops.Custom instance's: declared by its reg_info or its calls
            continue
        kernels.setdefault((e.op_name, e.backend), set()).add(kernel_signature(e.attr))
    infos = {(i.op_name, i.backend): i for i in all_op_infos()}
    for key, info in sorted(infos.items()):
        have = kernels.get(key, set())
        for sig in info.dtype_signatures():
            if sig not in have:
                problems.append(
                    f"{key[0]} ({key[1]}): op info declares {format_signature(sig)} but no kernel is registered for it"
                )
    for key, sigs in sorted(kernels.items()):
        info = infos.get(key)
        if info is None:
            problems.append(f"{key[0]} ({key[1]}): {len(sigs)} kernels are registered but there is no op info")
            continue
        declared = set(info.dtype_signatures())
        for sig in sorted(sigs - declared, key=format_signature):
            problems.append(f"{key[0]} ({key[1]}): kernel {format_signature(sig)} is not declared in its op info")
    classes = primitive_classes()
    for op in sorted({k[0] for k in kernels}):
        if op not in classes:
            problems.append(f"{op}: kernels are registered but no Primitive class named '{op}' is defined")
    return problems


def _registrations() -> dict:
    """What the registries hold now, to tell what an imported module added."""
    return {
        "primitives": set(primitive_classes()),
        "kernels": {(e.op_name, e.backend, e.attr) for e in registry.all_kernels(include_disabled=True)},
        "op infos": {(i.op_name, i.backend) for i in all_op_infos()},
        "bprops": set(bprop_getters.names()),
    }


def _import_user_module(name: str):
    """Import ``name``: a module on the path (the working directory included) or a ``.py`` file."""
    path = pathlib.Path(name)
    if path.suffix == ".py":
        if not path.is_file():
            raise FileNotFoundError(f"no file {name}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:  # as `python -c "import name"` would find it
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(name)


def _imported_problems(added: dict) -> list:
    """Checks for the operators a user's module defined: each one runs somewhere, and each bprop it
    registered belongs to an operator."""
    problems = []
    ops_with_kernels = {e.op_name for e in registry.all_kernels(include_disabled=True)}
    for name in sorted(added["primitives"]):
        if name not in ops_with_kernels:
            problems.append(f"{name}: the Primitive is defined but no kernel is registered for it on any backend")
    classes = primitive_classes()
    for name in sorted(added["bprops"]):
        if name not in classes:
            problems.append(f"{name}: a bprop is registered but no Primitive class named '{name}' is defined")
    return problems


def _import_modules(names, console):
    """Import the user's modules; (what they registered, problems), or None when one fails to import."""
    before = _registrations()
    for name in names:
        try:
            _import_user_module(name)
        except Exception as e:  # noqa: BLE001 - any error importing the user's module is the answer
            console.print(f"[bold red]error:[/bold red] importing {escape(name)}: {escape(f'{type(e).__name__}: {e}')}")
            return None
    after = _registrations()
    added = {what: after[what] - before[what] for what in after}
    shown = ", ".join(f"{len(v)} {what}" for what, v in added.items())
    ops = sorted({k[0] if isinstance(k, tuple) else k for v in added.values() for k in v})
    console.print(f"imported {', '.join(names)}: {shown}" + (f" ({', '.join(ops)})" if ops else ""), highlight=False)
    return added, _imported_problems(added)


def cmd_doctor(args) -> int:
    """Prove op info and kernels agree; exit 1 when they do not."""
    console = Console()
    problems = []
    if getattr(args, "imports", None):
        imported = _import_modules(args.imports, console)
        if imported is None:
            return 1
        problems += imported[1]
    problems += doctor_problems()
    n_kernels = len(registry.all_kernels(include_disabled=True))
    n_infos = len(all_op_infos())
    if problems:
        for p in problems:
            console.print(f"[red]x[/red] {p}")
        console.print(f"[bold red]{len(problems)} problems[/bold red] ({n_infos} op infos, {n_kernels} kernels).")
        return 1
    console.print(
        f"[green]ok[/green] {n_infos} op infos and {n_kernels} kernels agree; "
        f"{len(primitive_classes())} primitive classes import."
    )
    return _check_cuda(console) if getattr(args, "cuda", False) else 0


def _check_cuda(console) -> int:
    """Compile every CUDA kernel with NVRTC; print each compiler error in full."""
    from opforge.tools import cuda_check

    if cuda_check.find_nvrtc() is None:  # a CPU-only install: nothing is wrong, the check cannot run here
        console.print(f"[yellow]note:[/yellow] CUDA kernels not compiled: {escape(cuda_check.NVRTC_MISSING)}")
        return 0
    try:
        results = cuda_check.compile_all(progress=lambda msg: console.print(f"  {msg}", highlight=False))
    except RuntimeError as e:
        console.print(f"[bold red]error:[/bold red] {escape(str(e))}", highlight=False)
        return 1
    failed = [r for r in results if not r.ok]
    for r in failed:
        console.print(f"[red]x[/red] {r.source} ({r.arch}) does not compile:\n{escape(r.log)}", highlight=False)
    n = sum(len(r.names) for r in results)
    if failed:
        return 1
    console.print(f"[green]ok[/green] {n} CUDA kernel builds compile ({len(results)} source x architecture).")
    return 0


def cmd_demo(args) -> int:
    """Train an MLP on scikit-learn's 8x8 digits with opforge.nn (needs the demo extra)."""
    from opforge.tools import demo

    workers = getattr(args, "workers", 1)
    if workers < 1:
        print(f"opforge demo: --workers must be >= 1, but got {workers}", file=sys.stderr)
        return 2
    if workers > 1:
        return _relaunch_demo(args, workers)
    return demo.run(
        epochs=args.epochs,
        seed=args.seed,
        batch_size=args.batch_size,
        lr=args.lr,
        optimizer=args.optimizer,
        plot=args.plot,
        threads=args.threads,
        device=args.device,
        model=args.model,
        mode=args.mode,
        parallel=args.parallel,
    )


def _relaunch_demo(args, workers: int) -> int:
    """``opforge demo --workers N``: the same demo on N MPI ranks (mpiexec), data-parallel."""
    from opforge.tools import launch

    if launch.world_size() > 1:  # already under mpiexec: this rank trains
        args.workers = 1
        return cmd_demo(args)
    argv = ["-m", "opforge.tools.demo", "--epochs", str(args.epochs), "--seed", str(args.seed)]
    argv += ["--batch-size", str(args.batch_size), "--optimizer", args.optimizer, "--threads", str(args.threads)]
    argv += ["--device", args.device, "--model", args.model, "--parallel", args.parallel]
    if args.lr is not None:
        argv += ["--lr", repr(args.lr)]
    if args.plot:
        argv += ["--plot", args.plot]
    try:
        return launch.run(workers, argv)
    except launch.MpiNotFoundError as e:
        print(f"opforge demo: --workers {workers} needs MPI: {e}", file=sys.stderr)
        return 1


def cmd_bench(args) -> int:
    """Time opforge against NumPy and PyTorch (when installed): operators and training, with ratios."""
    from opforge.tools import bench

    return bench.run_from_args(args)


def cmd_run(args) -> int:
    """Start the script on ``-n`` ranks under the installed MPI's mpiexec."""
    from opforge.tools import launch

    return launch.main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opforge", description="opforge: operators, kernels and their registry")
    sub = parser.add_subparsers(dest="command", required=True)
    ops = sub.add_parser("ops", help="table of every operator x backend x dtype signature")
    ops.add_argument("--op", help="show one operator only (any case: relu is ReLU)")
    ops.add_argument(
        "--import",
        dest="imports",
        action="append",
        metavar="MODULE",
        help="import MODULE (a module name or a .py file) first, so the operators it registers are listed too",
    )
    ops.set_defaults(func=cmd_ops)
    doctor = sub.add_parser("doctor", help="check that op info and kernels agree")
    doctor.add_argument(
        "--cuda",
        action="store_true",
        help="also compile every CUDA kernel for sm_80 and sm_90 with NVRTC (no GPU needed)",
    )
    doctor.add_argument(
        "--import",
        dest="imports",
        action="append",
        metavar="MODULE",
        help="import MODULE (a module name or a .py file) first, so the operators it registers are checked too",
    )
    doctor.set_defaults(func=cmd_doctor)
    demo = sub.add_parser(
        "demo", help="train an MLP or a LeNet on 8x8 digits with opforge.nn (pip install 'opforge[demo]')"
    )
    demo.add_argument("--epochs", type=int, default=20, help="passes over the training set (default 20)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the weights and the batch order (default 0)")
    demo.add_argument("--batch-size", type=int, default=32, help="samples per step (default 32)")
    demo.add_argument("--lr", type=float, default=None, help="default: adam 1e-3, momentum 0.05, sgd 0.1")
    demo.add_argument("--optimizer", choices=["adam", "momentum", "sgd"], default="adam", help="default adam")
    demo.add_argument("--plot", metavar="FILE", help="save loss and accuracy curves to this PNG")
    demo.add_argument("--threads", type=int, default=1, help="kernel threads (default 1: fastest for this size)")
    demo.add_argument("--device", choices=["CPU", "GPU"], default="CPU", help="where to train (default CPU)")
    demo.add_argument("--model", choices=["mlp", "lenet"], default="mlp", help="the network (default mlp)")
    demo.add_argument(
        "--mode", choices=["pynative", "graph"], default="pynative", help="graph: the training step traced once (jit)"
    )
    demo.add_argument(
        "--parallel",
        choices=["data", "tensor", "auto"],
        default="data",
        help="with --workers: data parallel (default), tensor parallel (the MLP's Dense layers split) or auto "
        "parallel (every operator's split chosen by the strategy search)",
    )
    demo.add_argument(
        "--workers",
        type=int,
        default=1,
        help="train on N MPI ranks (relaunches under mpiexec): data parallel, or see --parallel",
    )
    demo.set_defaults(func=cmd_demo)
    from opforge.tools import bench

    bench_parser = sub.add_parser(
        "bench",
        help="time opforge vs NumPy vs PyTorch: operators and a training step",
        description=bench.__doc__,  # what every suite times
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from opforge.tools.bench import add_arguments as add_bench_arguments

    add_bench_arguments(bench_parser)
    bench_parser.set_defaults(func=cmd_bench)
    run_parser = sub.add_parser(
        "run", help="run a script on N MPI ranks: opforge run -n 2 script.py [args] (wraps mpiexec)"
    )
    run_parser.add_argument("-n", type=int, required=True, help="the number of ranks (processes)")
    run_parser.add_argument("script", help="the Python script every rank runs")
    run_parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    run_parser.set_defaults(func=cmd_run)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
