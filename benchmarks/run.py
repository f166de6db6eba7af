#!/usr/bin/env python3
"""Upstream's `mlir.runtime` against memref_runtime, side by side in one process, same arrays.

    python benchmarks/run.py                   # the full run (under 3 minutes)
    python benchmarks/run.py --quick           # CI: short loops, a few repeats; asserts nothing about time
    python benchmarks/run.py --markdown        # the same tables in Markdown
    python benchmarks/run.py --write-figures   # and into docs/figures/run.md, which the docs include

Every figure times upstream's and our statement in alternating repeats and reports the
median and the best per-call time of each, and their ratio (upstream / ours). A figure that
raises makes the run exit 1; a missed target never does (the "met?" column only informs).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent.parent
try:
    import memref_runtime
except ImportError:  # not pip-installed: use the source tree
    sys.path.insert(0, str(ROOT / "runtime"))
    import memref_runtime

import mlir.runtime as upstream
from harness import (
    Loop,
    Settings,
    Timing,
    add_figures_option,
    measure,
    microseconds,
    render,
    section,
    times,
    write,
    write_figures,
    write_machine,
)

import memref_runtime.np_to_memref as ours

try:
    from memref_runtime.jit import JitModule
except ModuleNotFoundError as e:  # no typed calls yet: their rows say so
    if e.name != "memref_runtime.jit":
        raise
    JitModule = None

SIDES = {"upstream": upstream, "ours": ours}
SHAPES = [(16,), (4, 4), (2, 2, 2, 2)]
F32 = np.float32
NOT_AVAILABLE = "n/a (jit not available)"

# c = a + b over three memref<?xf32> (shared with tests/test_jit_cache.py).
ADD3 = (ROOT / "mlir_inputs" / "add3.mlir").read_text()
# add3 with read-only inputs: tensor parameters, which take immutable JAX arrays too.
ADD3_TENSORS = r"""
func.func @add3t(%a: tensor<?xf32>, %b: tensor<?xf32>, %c: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = tensor.extract %a[%i] : tensor<?xf32>
    %y = tensor.extract %b[%i] : tensor<?xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<?xf32>
  }
  return
}
"""
# out = a for bf16, which NumPy cannot export through DLPack and torch cannot view as NumPy.
COPY_BF16 = r"""
func.func @copy(%a: memref<?xbf16>, %out: memref<?xbf16>) {
  memref.copy %a, %out : memref<?xbf16> to memref<?xbf16>
  return
}
"""
PIPELINE = (
    "builtin.module(convert-scf-to-cf,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)"
)


@dataclass
class Row:
    """One timed figure: a reference (upstream, or a hand-written baseline) against ours."""

    figure: str
    reference: Timing | None = None
    ours: Timing | None = None
    target: float | None = None  # least acceptable median ratio reference / ours
    target_text: str = ""
    note: str = ""  # replaces the numbers: n/a, or the error

    def cells(self) -> list[str]:
        target = self.target_text or (f">= {self.target:g}x" if self.target else "")
        if self.note:
            return [f"{self.figure}: {self.note}", *["n/a"] * 6, target, "n/a" if target else ""]
        ratio = Timing(self.reference.median / self.ours.median, self.reference.best / self.ours.best)
        met = "" if self.target is None else ("yes" if ratio.median >= self.target else "no")
        return [
            self.figure,
            microseconds(self.reference.median),
            microseconds(self.reference.best),
            microseconds(self.ours.median),
            microseconds(self.ours.best),
            times(ratio.median),
            times(ratio.best),
            target,
            met,
        ]


@dataclass
class Check:
    """One figure that is not a per-call time: memory growth, a time ratio."""

    figure: str
    upstream: str
    ours: str
    target: str = ""
    met: bool | None = None

    def cells(self) -> list[str]:
        return [
            self.figure,
            self.upstream,
            self.ours,
            self.target,
            "" if self.met is None else ("yes" if self.met else "no"),
        ]


class Bench:
    """The settings of this run and the figures' shared helpers."""

    def __init__(self, settings: Settings, quick: bool):
        self.settings, self.quick = settings, quick

    def loop(self, stmt: str, **names) -> Loop:
        return Loop(stmt, names, self.settings.gc_enabled)

    def group(self, **loops: Loop) -> dict[str, Timing]:
        return {key: Timing.of(s) for key, s in measure(loops, self.settings).items()}

    def side_by_side(self, stmt: str, names: Callable[[object], dict]) -> tuple[Timing, Timing]:
        """`stmt` with upstream's names, then with ours: `names(module)` binds them."""
        t = self.group(**{side: self.loop(stmt, **names(module)) for side, module in SIDES.items()})
        return t["upstream"], t["ours"]


def forget_upstream_classes() -> None:
    """Drop the pointer classes ctypes cached for upstream's per-call descriptor classes.

    That cache is what keeps upstream's classes (and ~9 KB each) alive forever; emptied
    between figures, the leak of one figure does not slow the garbage collector in the next.
    """
    cache = getattr(ctypes, "_pointer_type_cache", {})
    for key in list(cache):
        cls = key
        while isinstance(cls, type) and issubclass(cls, ctypes._Pointer):
            cls = cls._type_
        if (
            isinstance(cls, type)
            and cls.__module__ == upstream.np_to_memref.__name__
            and cls.__name__ == "MemRefDescriptor"
        ):
            del cache[key]
    gc.collect()


def raw_bytes(desc: ctypes.Structure) -> bytes:
    return ctypes.string_at(ctypes.addressof(desc), ctypes.sizeof(desc))


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(f"wrong result: {what}")


def array(shape) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=F32).reshape(shape)


# --- figures: each returns its rows; the first docstring line names it if it fails ---------


def ranked_descriptors(bench: Bench) -> list[Row]:
    """ranked descriptor"""
    rows = []
    for shape in SHAPES:
        a = array(shape)
        expect(
            raw_bytes(upstream.get_ranked_memref_descriptor(a)) == raw_bytes(ours.get_ranked_memref_descriptor(a)),
            f"ranked descriptors of a {shape} array differ",
        )
        up, us = bench.side_by_side("get(a)", lambda m, a=a: {"get": m.get_ranked_memref_descriptor, "a": a})
        rows.append(Row(f"ranked descriptor, rank {len(shape)} {shape}", up, us, 15))
    return rows


def unranked_descriptor(bench: Bench) -> list[Row]:
    """unranked descriptor"""
    a = array((4, 4))
    u, o = upstream.get_unranked_memref_descriptor(a), ours.get_unranked_memref_descriptor(a)
    expect(
        u.rank == o.rank == 2 and ctypes.string_at(u.descriptor, 56) == ctypes.string_at(o.descriptor, 56),
        "unranked descriptors differ",
    )
    up, us = bench.side_by_side("get(a)", lambda m: {"get": m.get_unranked_memref_descriptor, "a": a})
    return [Row("unranked descriptor, rank 2", up, us)]


def pointer_to_pointer(bench: Bench) -> list[Row]:
    """pointer(pointer(descriptor))"""
    a = array((4, 4))
    up, us = bench.side_by_side(
        "P(P(get(a)))", lambda m: {"P": ctypes.pointer, "get": m.get_ranked_memref_descriptor, "a": a}
    )
    return [Row("pointer(pointer(ranked descriptor)), rank 2", up, us, 15)]


def memref_to_numpy(bench: Bench) -> list[Row]:
    """memref -> NumPy"""
    a = array((4, 4))
    ranked = {m: ctypes.pointer(m.get_ranked_memref_descriptor(a)) for m in SIDES.values()}
    unranked = {m: ctypes.pointer(m.get_unranked_memref_descriptor(a)) for m in SIDES.values()}
    for m in SIDES.values():
        expect(np.array_equal(m.ranked_memref_to_numpy(ranked[m]), a), f"{m.__name__}.ranked_memref_to_numpy")
        expect(
            np.array_equal(m.unranked_memref_to_numpy(unranked[m], F32), a), f"{m.__name__}.unranked_memref_to_numpy"
        )
    up_r, us_r = bench.side_by_side("to_numpy(p)", lambda m: {"to_numpy": m.ranked_memref_to_numpy, "p": ranked[m]})
    up_u, us_u = bench.side_by_side(
        "to_numpy(p, dtype)", lambda m: {"to_numpy": m.unranked_memref_to_numpy, "p": unranked[m], "dtype": F32}
    )
    return [
        Row("ranked memref -> NumPy, rank 2", up_r, us_r, 10),
        Row("unranked memref -> NumPy, rank 2", up_u, us_u, 10),
    ]


def conversion_scaling(bench: Bench) -> list[Row | Check]:
    """conversion at 1e3 .. 1e8 elements"""
    exponents = (3, 6, 7 if bench.quick else 8)
    arrays = {e: np.empty(10**e, F32) for e in exponents}  # untouched pages: no RSS, no time
    loops = {
        f"{side}{e}": bench.loop("get(a)", get=m.get_ranked_memref_descriptor, a=arrays[e])
        for e in exponents
        for side, m in SIDES.items()
    }
    t = bench.group(**loops)
    rows: list[Row | Check] = []
    for e in exponents:
        size = f" ({arrays[e].nbytes / 1e6:,.0f} MB)" if e >= 6 else ""
        rows.append(Row(f"ranked descriptor, 1e{e} float32{size}", t[f"upstream{e}"], t[f"ours{e}"]))
    small, big = exponents[0], exponents[-1]
    growth = {side: t[f"{side}{big}"].median / t[f"{side}{small}"].median for side in SIDES}
    quick_note = " (--quick: 1e7, not 1e8)" if bench.quick else ""
    rows.append(
        Check(
            f"descriptor time 1e{big} / 1e{small} elements, median{quick_note}",
            f"{growth['upstream']:.2f}",
            f"{growth['ours']:.2f}",
            "<= 1.2",
            growth["ours"] <= 1.2,
        )
    )
    return rows


def upstream_engine(source: str):
    """Upstream's way: parse, lower, ExecutionEngine (returned with the Context it lives in)."""
    from mlir.execution_engine import ExecutionEngine
    from mlir.ir import Context, Module
    from mlir.passmanager import PassManager

    context = Context()
    with context:
        module = Module.parse(source)
        PassManager.parse(PIPELINE).run(module.operation)
        return context, ExecutionEngine(module)


def add3_arrays(n: int = 16):
    return np.arange(n, dtype=F32), np.full(n, 0.5, F32), np.zeros(n, F32)


def typed_call(bench: Bench) -> list[Row]:
    """typed call add3(a, b, c)"""
    names = [
        "typed call add3, 3 x memref<?xf32> (n=16): vs upstream's invoke pattern",
        "typed call add3: vs invoke with pre-built args",
        "typed call add3: vs raw ctypes, pre-packed (no conversion or check per call)",
        "bound typed call jit.add3.bind(a, b, c)(): vs raw ctypes, pre-packed",
    ]
    if JitModule is None:
        within_2x = dict(target=0.5, target_text=">= 0.5x (ours <= 2x)")
        return [
            Row(names[0], note=NOT_AVAILABLE, target=25),
            Row(names[1], note=NOT_AVAILABLE, **within_2x),
            Row(names[2], note=NOT_AVAILABLE),
            Row(names[3], note=NOT_AVAILABLE, **within_2x),
        ]
    a, b, c = add3_arrays()
    context, engine = upstream_engine(ADD3)  # the engine lives in the context: keep both
    jit = JitModule(ADD3)
    prebuilt = [ctypes.pointer(ctypes.pointer(upstream.get_ranked_memref_descriptor(x))) for x in (a, b, c)]
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.raw_lookup("_mlir_ciface_add3"))
    packed = (ctypes.c_void_p * 3)(*[ctypes.addressof(p.contents) for p in prebuilt])
    loops = {
        "upstream": bench.loop(
            'engine.invoke("add3", *[ctypes.pointer(ctypes.pointer(upstream.get_ranked_memref_descriptor(x)))'
            " for x in (a, b, c)])",
            engine=engine,
            ctypes=ctypes,
            upstream=upstream,
            a=a,
            b=b,
            c=c,
        ),
        "invoke_prebuilt": bench.loop('engine.invoke("add3", *args)', engine=engine, args=prebuilt),
        "raw": bench.loop("fn(packed)", fn=fn, packed=packed),
        "ours": bench.loop("jit.add3(a, b, c)", jit=jit, a=a, b=b, c=c),
        "ours_bound": bench.loop("bound()", bound=jit.add3.bind(a, b, c)),
    }
    for key, loop in loops.items():  # each way computes c = a + b
        c[:] = 0
        loop.run(1)
        expect(np.array_equal(c, a + b), f"add3 called by {key}")
    t = bench.group(**loops)
    return [
        Row(names[0], t["upstream"], t["ours"], 25),
        Row(names[1], t["invoke_prebuilt"], t["ours"], 0.5, ">= 0.5x (ours <= 2x)"),
        # No target: a call that checks and converts three arrays cannot come within 2x of a
        # call that does neither; the like-for-like figure is the bound call below.
        Row(names[2], t["raw"], t["ours"]),
        Row(names[3], t["raw"], t["ours_bound"], 0.5, ">= 0.5x (ours <= 2x)"),
    ]


def framework_arguments(bench: Bench) -> list[Row]:
    """typed calls with torch and JAX arguments"""
    within_2x = dict(target=0.5, target_text=">= 0.5x (<= 2x NumPy's)")
    names = {
        "torch": "typed call add3, 3 x memref<?xf32> (n=16), torch.Tensor arguments: vs NumPy arguments",
        "torch_bound": "bound typed call jit.add3.bind(torch a, b, c)(): vs NumPy arguments",
        "jax": "typed call add3t, 2 x tensor<?xf32> + memref<?xf32> (n=16), jax.Array inputs: vs NumPy",
        "torch_bf16": (
            "typed call copy, 2 x memref<?xbf16> (n=16), torch.Tensor arguments: vs NumPy (ml_dtypes) arguments"
        ),
    }
    torch, jnp = optional("torch"), optional("jax.numpy")
    if JitModule is None or torch is None or jnp is None:
        missing = NOT_AVAILABLE if JitModule is None else "n/a (needs torch and jax: pip install -e '.[frameworks]')"
        return [Row(name, note=missing, **(within_2x if key != "torch_bf16" else {})) for key, name in names.items()]
    import ml_dtypes

    a, b, c = add3_arrays()
    ta, tb, tc = (torch.from_numpy(x.copy()) for x in (a, b, c))
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    h = np.arange(16, dtype=F32).astype(ml_dtypes.bfloat16)
    th, th_out = torch.arange(16, dtype=torch.bfloat16), torch.zeros(16, dtype=torch.bfloat16)
    jit, jit_t, jit_h = JitModule(ADD3), JitModule(ADD3_TENSORS), JitModule(COPY_BF16)
    loops = {  # jit.<name> as typed_call does it: the plain function after the first call
        "numpy": bench.loop("jit.add3(a, b, c)", jit=jit, a=a, b=b, c=c),
        "torch": bench.loop("jit.add3(a, b, c)", jit=jit, a=ta, b=tb, c=tc),
        "numpy_bound": bench.loop("bound()", bound=jit.add3.bind(a, b, c)),
        "torch_bound": bench.loop("bound()", bound=jit.add3.bind(ta, tb, tc)),
        "numpy_tensors": bench.loop("jit.add3t(a, b, c)", jit=jit_t, a=a, b=b, c=c),
        "jax": bench.loop("jit.add3t(a, b, c)", jit=jit_t, a=ja, b=jb, c=c),
        "numpy_bf16": bench.loop("jit.copy(a, out)", jit=jit_h, a=h, out=np.zeros_like(h)),
        "torch_bf16": bench.loop("jit.copy(a, out)", jit=jit_h, a=th, out=th_out),
    }
    for key in ("torch", "torch_bound"):
        tc.zero_()
        loops[key].run(1)
        expect(np.array_equal(tc.numpy(), a + b), f"add3 on torch tensors ({key})")
    c[:] = 0
    loops["jax"].run(1)
    expect(np.array_equal(c, a + b), "add3t on JAX arrays")
    loops["torch_bf16"].run(1)
    expect(torch.equal(th_out, th), "copy of a torch bf16 tensor")
    t = bench.group(**loops)
    return [
        Row(names["torch"], t["numpy"], t["torch"], **within_2x),
        Row(names["torch_bound"], t["numpy_bound"], t["torch_bound"], **within_2x),
        Row(names["jax"], t["numpy_tensors"], t["jax"], **within_2x),
        # No target: NumPy itself lacks bf16; ml_dtypes gives it the dtype but not DLPack.
        Row(names["torch_bf16"], t["numpy_bf16"], t["torch_bf16"]),
    ]


def optional(module: str):
    """`module` imported, or None where it is not installed (the frameworks are an extra)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def rss_growth(op: Callable[[], object], calls: int, warmup: int = 1000) -> int:
    """Bytes the resident set grows by over `calls` calls of `op`, after a warm-up."""
    for _ in range(warmup):
        op()
    process = psutil.Process()
    gc.collect()
    before = process.memory_info().rss
    for _ in range(calls):
        op()
    gc.collect()
    return process.memory_info().rss - before


def memory_case(case: str):
    """The operation of one memory-growth case, `what:side`."""
    what, side = case.split(":")
    m = SIDES[side]
    P, get = ctypes.pointer, m.get_ranked_memref_descriptor
    if what == "roundtrip":
        a, to_numpy = array((4, 4)), m.ranked_memref_to_numpy
        return lambda: to_numpy(P(P(get(a)))[0])
    a, b, c = add3_arrays()
    if side == "ours":
        return partial(JitModule(ADD3).add3, a, b, c)
    context, engine = upstream_engine(ADD3)

    def call():
        engine.invoke("add3", P(P(get(a))), P(P(get(b))), P(P(get(c))))

    call.context = context  # the engine lives in it
    return call


def measure_memory_case(case: str, calls: int) -> int:
    """RSS growth of `case` in a fresh interpreter: no memory another figure freed hides a leak."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--memory-case", case, "--calls", str(calls)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"memory case {case} failed:\n{done.stderr}")
    return int(done.stdout.split()[-1])


def memory_growth(bench: Bench) -> list[Check]:
    """memory growth"""
    total = 100_000
    calls = {"ours": 20_000, "upstream": 1_000} if bench.quick else {"ours": total, "upstream": 5_000}

    def growth(what: str, side: str) -> tuple[str, float]:
        n = calls[side]
        grown = measure_memory_case(f"{what}:{side}", n) * total / n
        scaled = "" if n == total else f", {n:,} calls measured, x{total // n}"
        return f"{grown / 1e6:+.2f} MB ({grown / total:,.0f} B/call{scaled})", grown

    cases = [("roundtrip", f"RSS growth, {total:,} x (pointer(pointer(descriptor)) + to NumPy)")]
    if JitModule is not None:
        cases.append(("call", f"RSS growth, {total:,} typed calls add3 (upstream: invoke pattern)"))
    checks = []
    for what, name in cases:
        ours_text, ours_grown = growth(what, "ours")
        up_text, _ = growth(what, "upstream")
        checks.append(Check(name, up_text, ours_text, "< 1 MB", ours_grown < 1e6))
    if JitModule is None:
        checks.append(Check(f"RSS growth, {total:,} typed calls add3: {NOT_AVAILABLE}", "n/a", "n/a", "< 1 MB"))
    return checks


def differential_time(bench: Bench) -> list[Check]:
    """check_against, 100 examples"""
    figure = "check_against(@add, reference), 100 examples of 2-D strided views, seconds"
    if JitModule is None:
        return [Check(f"{figure}: {NOT_AVAILABLE}", "n/a", "n/a")]
    import time

    from memref_runtime.differential import check_against

    jit = JitModule(ROOT / "mlir_inputs" / "differential_add.mlir")

    def reference(a, b, out):
        out[...] = a + b

    runs = 1 if bench.quick else 3
    times = []
    for _ in range(runs):  # the same seed: the same 100 examples each run
        start = time.perf_counter()
        summary = check_against(jit.add, reference, outputs=[2], max_examples=100)
        times.append(time.perf_counter() - start)
        expect(summary.examples == 100, f"check_against ran {summary.examples} examples, not 100")
    best = f"best of {runs}" if runs > 1 else "one run"
    return [Check(f"{figure} ({best})", "n/a (upstream has none)", f"{min(times):.2f} s")]


FIGURES = [
    ranked_descriptors,
    unranked_descriptor,
    pointer_to_pointer,
    memref_to_numpy,
    conversion_scaling,
    typed_call,
    framework_arguments,
    memory_growth,
    differential_time,
]

TIME_HEADERS = [
    "figure (per call, µs)",
    "upstream median",
    "upstream best",
    "ours median",
    "ours best",
    "ratio median",
    "ratio best",
    "target",
    "met?",
]
FRAMEWORK_HEADERS = [
    "figure (per call, µs)",
    "NumPy median",
    "NumPy best",
    "other median",
    "other best",
    "ratio median",
    "ratio best",
    "target",
    "met?",
]
CHECK_HEADERS = ["figure", "upstream", "ours", "target", "met?"]


def check_upstream_is_upstream() -> None:
    """Comparing memref_runtime with itself (mlir.runtime aliased to it) would prove nothing."""
    if (
        getattr(upstream.get_ranked_memref_descriptor, "__module__", "") != "mlir.runtime.np_to_memref"
        or upstream.get_ranked_memref_descriptor is ours.get_ranked_memref_descriptor
    ):
        raise SystemExit(f"mlir.runtime ({upstream.__file__}) is not upstream's runtime; unset the alias")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI mode: ~5 ms repeats, 3 of them, smaller loops")
    parser.add_argument("--markdown", action="store_true", help="print the tables in Markdown")
    parser.add_argument("--repeats", type=int, help="repeats per figure (default: 11, or 3 with --quick)")
    parser.add_argument("--no-gc", action="store_true", help="time with the garbage collector off, as timeit does")
    parser.add_argument("--memory-case", help=argparse.SUPPRESS)  # one RSS measurement, in a child
    parser.add_argument("--calls", type=int, help=argparse.SUPPRESS)
    add_figures_option(parser)
    args = parser.parse_args(argv)
    if args.memory_case:
        write(str(rss_growth(memory_case(args.memory_case), args.calls)))
        return 0
    check_upstream_is_upstream()
    return write_figures(args, "run", argv, lambda: report(args, argv))


def report(args: argparse.Namespace, argv: list[str] | None) -> int:
    """Measures every figure and prints the tables; 1 when a figure raised."""
    settings = Settings(
        repeat_ns=5_000_000 if args.quick else 30_000_000,
        repeats=args.repeats or (3 if args.quick else 11),
        gc_enabled=not args.no_gc,
    )
    bench = Bench(settings, args.quick)

    command = " ".join(["python", "benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])])
    write_machine(
        args.markdown,
        [
            ("upstream", str(Path(upstream.__file__).parent)),
            ("ours", str(Path(memref_runtime.__file__).parent)),
            ("command", command),
        ],
    )

    # The rows of each table; the docs include each table apart (interop.md: the frameworks').
    tables: dict[str, list] = {"upstream": [], "frameworks": [], "checks": []}
    failed = False
    for figure in FIGURES:
        title = figure.__doc__.splitlines()[0]
        print(f"[{title}]", file=sys.stderr, flush=True)
        rows = tables["frameworks" if figure is framework_arguments else "upstream"]
        try:
            for item in figure(bench):
                (tables["checks"] if isinstance(item, Check) else rows).append(item)
        except Exception as e:  # report it, run the others, exit 1 at the end
            traceback.print_exc()
            rows.append(Row(title, note=f"error: {type(e).__name__}: {str(e)[:80]}"))
            failed = True
        finally:
            forget_upstream_classes()

    per_call = (
        f"Per-call time in µs, median and best of {settings.repeats} repeats of "
        f"~{settings.repeat_ns // 10**6} ms, interleaved, garbage collector "
        f"{'on' if settings.gc_enabled else 'off'}"
    )
    for name, headers, preamble in (
        ("upstream", TIME_HEADERS, f"{per_call}; ratio = upstream (or baseline) / ours."),
        (
            "frameworks",
            FRAMEWORK_HEADERS,
            f"Typed calls with arrays of other frameworks against the same calls "
            f"with NumPy arrays. {per_call}; ratio = NumPy / other framework.",
        ),
    ):
        with section(name, args.markdown):
            write(preamble)
            write()
            write(render(headers, [r.cells() for r in tables[name]], args.markdown, right=lambda i: 0 < i < 7))
        write()
    with section("checks", args.markdown):
        write(render(CHECK_HEADERS, [c.cells() for c in tables["checks"]], args.markdown, right=lambda i: i in (1, 2)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
