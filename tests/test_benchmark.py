"""JitFunction.benchmark: the native loop calls the kernel exactly number x repeats times on the
frame packed once, frees what the results allocated, runs inside the runtime-verification guard,
and its result's statistics are right. Nothing here asserts how fast this machine is beyond
wide margins (an empty call costs under a microsecond)."""

from __future__ import annotations

import json
import math
import statistics

import numpy as np
import psutil
import pytest

pytest.importorskip("mlir.execution_engine")

from support.paths import mlir_input  # noqa: E402

from memref_runtime import JitModule, RuntimeVerificationError  # noqa: E402
from memref_runtime.jit.benchmark_result import BenchmarkResult, format_seconds, median_interval, quantile  # noqa: E402

pytestmark = pytest.mark.jit

BENCH_KERNELS = mlir_input("bench_kernels.mlir")

KERNELS = r"""
func.func @count(%c: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i64
  %x = memref.load %c[%c0] : memref<1xi64>
  %y = arith.addi %x, %one : i64
  memref.store %y, %c[%c0] : memref<1xi64>
  return
}
// A fresh, written buffer of %n floats per call: a leak shows in the RSS.
func.func @fresh(%n: index) -> memref<?xf32> {
  %r = memref.alloc(%n) : memref<?xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%r : memref<?xf32>)
  return %r : memref<?xf32>
}
func.func @fresh_unranked(%n: index) -> memref<*xf32> {
  %r = memref.alloc(%n) : memref<?xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%r : memref<?xf32>)
  %u = memref.cast %r : memref<?xf32> to memref<*xf32>
  return %u : memref<*xf32>
}
// One buffer returned twice: freed once per call, not twice.
func.func @twice(%n: index) -> (memref<?xf32>, memref<?xf32>) {
  %r = memref.alloc(%n) : memref<?xf32>
  return %r, %r : memref<?xf32>, memref<?xf32>
}
// Views of an input and of a global: never freed.
func.func @view(%a: memref<?xf32>) -> (memref<?xf32>, memref<*xf32>) {
  %u = memref.cast %a : memref<?xf32> to memref<*xf32>
  return %a, %u : memref<?xf32>, memref<*xf32>
}
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @global() -> memref<4xf32> {
  %g = memref.get_global @table : memref<4xf32>
  return %g : memref<4xf32>
}
// Sleeps %us microseconds: wall time passes, the thread's CPU time hardly does.
func.func private @usleep(i32) -> i32
func.func @sleep(%us: i32) {
  %status = func.call @usleep(%us) : (i32) -> i32
  return
}
func.func @scalar(%x: f64) -> f64 {
  %r = arith.mulf %x, %x : f64
  return %r : f64
}
"""


@pytest.fixture(scope="module")
def kernels():
    """KERNELS, compiled once for the module: these tests time the benchmark loop, not the code LLVM makes."""
    return JitModule(KERNELS)


@pytest.fixture(scope="module")
def bench():
    return JitModule(BENCH_KERNELS)


def test_the_loop_calls_the_kernel_number_times_repeats_on_the_same_arrays(kernels):
    counter = np.zeros(1, np.int64)
    result = kernels.count.benchmark(counter, number=37, repeats=7, warmup=0)
    # One probe call from Python, then 7 samples of 37 calls, all on `counter` itself.
    assert counter[0] == 1 + 37 * 7
    assert (result.number, result.repeats, len(result.samples)) == (37, 7, 7)
    counter[0] = 0
    kernels.count.benchmark(counter, number=5, repeats=3, warmup=1e-3)  # warm-up samples of 5 calls too
    assert counter[0] >= 1 + 5 + 15 and (counter[0] - 1) % 5 == 0


def test_number_is_chosen_so_that_the_samples_fill_min_time(bench):
    result = bench.empty.benchmark(min_time=0.05, repeats=5, warmup=0)
    # Five samples at the fastest per-call time fill min_time within a factor 4 (the fastest:
    # on a loaded machine the scheduler stretches some samples, never shortens one).
    assert 0.05 / 4 < result.number * result.min * 5 < 0.05 * 4
    assert result.number > 1000  # an empty call is far under 10 us, so thousands fit


def test_an_empty_call_costs_under_a_microsecond_and_the_overhead_is_reported(bench):
    result = bench.empty.benchmark(repeats=5, min_time=0.01)
    assert 0 < result.median < 1e-6
    assert 0 < result.overhead < 1e-6


def test_every_sample_reads_three_clocks_and_the_thread_cpu_time_is_judged(bench):
    state = np.zeros(1)
    result = bench.chain.benchmark(1000, state, repeats=5, min_time=0.01)
    assert result.clock == "thread" and set(result.by_clock) == {"wall", "process", "thread"}
    assert result.samples == result.by_clock["thread"]
    for thread, process, wall in zip(*(result.by_clock[c] for c in ("thread", "process", "wall"))):
        # Read nested (wall outside, the thread's CPU time inside): each holds the next.
        assert 0 < thread <= process and thread <= wall
    wall = result.on("wall")
    assert wall.clock == "wall" and wall.samples == result.by_clock["wall"] and wall.number == result.number
    assert "per call of thread CPU time" in str(result)
    with pytest.raises(
        ValueError,
        match=r"clock must be one of the clocks this result read \(process, thread, "
        r"wall\), got 'cycles'",
    ):
        result.on("cycles")


def test_a_sleeping_kernel_takes_wall_time_and_almost_no_cpu_time(kernels):
    # 2 ms asleep per call: the wall clock counts them, the CPU clocks count what the call ran.
    result = kernels.sleep.benchmark(np.int32(2000), number=3, repeats=3, warmup=0)
    assert result.clock == "thread"
    assert min(result.by_clock["wall"]) >= 2e-3
    assert result.median < 0.5e-3
    assert kernels.sleep.benchmark(np.int32(2000), number=3, repeats=3, warmup=0, clock="wall").median >= 2e-3


@pytest.mark.parametrize(
    "thread, process, judged",
    [
        ([100, 100], [101, 102], "thread"),  # an idle interpreter's other threads add ~nothing
        ([100, 100], [190, 210], "process"),  # the kernel ran on other threads too
        ([1, 1], [4, 3], "thread"),  # a kernel that sleeps, beside another thread's bit of work
    ],
)
def test_cpu_clock_takes_the_process_time_when_other_threads_worked(thread, process, judged):
    from memref_runtime.jit.benchmark import judged_clock

    times = {"thread": thread, "process": process, "wall": [300, 300]}
    assert judged_clock("cpu", times) == judged
    assert judged_clock("wall", times) == "wall"


def test_benchmark_works_before_and_after_the_first_call(bench):
    state = np.zeros(1)
    jit = JitModule(BENCH_KERNELS)
    before = jit.chain.benchmark(100, state, repeats=3, min_time=0.005)
    jit.chain(1, state)  # from now on jit.chain is the plain call function
    after = jit.chain.benchmark(100, state, repeats=3, min_time=0.005)
    assert before.name == after.name == "chain"


def _rss_growth(call) -> int:
    process = psutil.Process()
    before = process.memory_info().rss
    call()
    return process.memory_info().rss - before


@pytest.mark.serial
@pytest.mark.parametrize("name", ["fresh", "fresh_unranked"])
def test_memory_the_results_allocated_is_freed_after_every_call(kernels, name):
    # 400 calls of 1 MB written buffers: 400 MB if the loop leaked them (checked by sabotage).
    n = 1 << 18
    growth = _rss_growth(lambda: getattr(kernels, name).benchmark(n, number=100, repeats=4, warmup=0))
    assert growth < 50 << 20


def test_results_that_are_not_fresh_memory_are_not_freed(kernels):
    a = np.arange(8, dtype=np.float32)
    kernels.view.benchmark(a, number=1000, repeats=3, warmup=0)  # a free() of `a` would crash or corrupt
    assert np.array_equal(a, np.arange(8, dtype=np.float32))
    table = getattr(kernels, "global")  # `global` is a Python keyword
    table.benchmark(number=1000, repeats=3, warmup=0)  # free() of a global's 0xDEADBEEF would crash
    assert np.array_equal(table(), [1, 2, 3, 4])
    kernels.twice.benchmark(16, number=1000, repeats=3, warmup=0)  # a double free would abort


def test_scalar_results_and_arguments(kernels):
    result = kernels.scalar.benchmark(3.0, repeats=3, min_time=0.005)
    assert result.median > 0


def test_a_failed_runtime_check_inside_the_loop_raises(tmp_path):
    # The probe reads a[0]; the loop's calls read a[1], a[2], ... until a[4] fails its check.
    jit = JitModule(
        r"""
    func.func @walk(%a: memref<4xf32>, %i: memref<1xindex>) -> f32 {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %k = memref.load %i[%c0] : memref<1xindex>
      %x = memref.load %a[%k] : memref<4xf32>
      %next = arith.addi %k, %c1 : index
      memref.store %next, %i[%c0] : memref<1xindex>
      return %x : f32
    }""",
        runtime_verification=True,
    )
    at = np.zeros(1, np.int64)
    with pytest.raises(RuntimeVerificationError, match="out-of-bounds"):
        jit.walk.benchmark(np.zeros(4, np.float32), at, number=10, repeats=1, warmup=0)
    assert at[0] == 4  # calls 0 to 3 ran; the fifth stopped at its check


def test_a_callback_error_during_the_loop_is_raised_after_it():
    jit = JitModule(r"""
    func.func private @hook(f64) -> f64
    func.func @k(%x: f64) -> f64 {
      %r = call @hook(%x) : (f64) -> f64
      return %r : f64
    }""")
    calls = []

    def hook(x):
        calls.append(x)
        if len(calls) == 10:
            raise KeyError("the tenth call")
        return x

    jit.register_callback("hook", hook)
    with pytest.raises(KeyError, match="the tenth call"):
        jit.k.benchmark(1.0, number=20, repeats=2, warmup=0)
    assert len(calls) == 1 + 40  # the loop ran to its end; Python ran inside each call
    assert jit.k(2.0) == 2.0  # and the next call is clean


def test_bad_arguments_fail_as_a_call_does(bench):
    with pytest.raises(TypeError, match=r"chain\(\) takes 2 arguments"):
        bench.chain.benchmark(3)
    with pytest.raises(TypeError, match=r"chain\(\): argument 1 expects memref<1xf64>"):
        bench.chain.benchmark(3, np.zeros(1, np.float32))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"repeats": 0}, "repeats must be an int >= 1"),
        ({"repeats": 2.5}, "repeats must be an int >= 1"),
        ({"number": 0}, "number must be an int >= 1"),
        ({"number": 10, "min_time": 0.1}, "give number= .* or min_time= .*, not both"),
        ({"min_time": 0}, "min_time must be a number of seconds > 0"),
        ({"warmup": -1}, "warmup must be a number of seconds >= 0"),
        ({"flops": "2n"}, "flops must be a number >= 0"),
        ({"bytes": -1}, "bytes must be a number >= 0"),
        ({"clock": "cycles"}, "clock must be one of 'cpu', 'thread', 'process', 'wall', got 'cycles'"),
    ],
)
def test_bad_options_are_refused_by_name(bench, options, message):
    with pytest.raises(ValueError, match=message):
        bench.empty.benchmark(**options)


# --- the statistics -------------------------------------------------------------------------

SAMPLES = (5.0, 1.0, 4.0, 2.0, 3.0, 9.0, 6.0, 8.0, 7.0, 10.0, 11.0)


def test_statistics_of_the_samples():
    r = BenchmarkResult("k", tuple(s * 1e-6 for s in SAMPLES), number=10, overhead=2e-9, flops=2e3, bytes=4e3)
    assert r.samples[:2] == (5.0 * 1e-6, 1.0 * 1e-6)  # in the order taken
    assert (r.min, r.max, r.median) == pytest.approx((1e-6, 11e-6, 6e-6))
    assert r.mean == pytest.approx(6e-6)
    assert r.stdev == pytest.approx(statistics.stdev(SAMPLES) * 1e-6)
    assert (r.q1, r.q3) == pytest.approx(tuple(np.quantile(SAMPLES, [0.25, 0.75]) * 1e-6))
    assert r.iqr == pytest.approx(5e-6)
    # 11 samples: [x_(2), x_(10)] covers the median with probability 1 - 2 * 12 / 2048.
    assert r.ci == pytest.approx((2e-6, 10e-6)) and r.ci_level == pytest.approx(1 - 24 / 2048)
    assert r.gflops == pytest.approx(2e3 / 6e-6 / 1e9) and r.gbps == pytest.approx(4e3 / 6e-6 / 1e9)
    assert r.total == pytest.approx(sum(SAMPLES) * 1e-6 * 10)
    assert json.loads(json.dumps(r.to_dict()))["ci_low"] == r.ci[0]
    assert r.clock == "wall" and r.to_dict()["clock"] == "wall"
    text = str(r)
    assert text.startswith("k: median 6 us per call of wall time (99% interval 2 us to 10 us), min 1 us")
    assert "11 samples of 10 calls; loop overhead 2 ns per call; 0.333 GFLOP/s; 0.667 GB/s" in text
    assert repr(r) == f"<BenchmarkResult {text}>"


@pytest.mark.parametrize("n, k", [(6, 1), (11, 2), (20, 6), (51, 19), (100, 40)])
def test_the_median_interval_is_the_binomial_one(n, k):
    # k from tables of the sign test's interval (e.g. Conover, Practical Nonparametric
    # Statistics): the largest k with 2 P(Bin(n, 1/2) <= k - 1) <= 0.05.
    values = list(range(1, n + 1))
    low, high, level = median_interval(values)
    assert (low, high) == (k, n + 1 - k)
    assert level >= 0.95
    tighter = 1 - 2 * sum(math.comb(n, j) for j in range(k + 1)) / 2**n
    assert tighter < 0.95  # k + 1 would not reach 95%


def test_too_few_samples_give_the_whole_range_and_say_its_coverage():
    assert median_interval([1, 2, 3]) == (1, 3, 0.75)
    assert median_interval([7]) == (7, 7, 0.0)
    with pytest.raises(ValueError, match="no values"):
        median_interval([])


def test_quantile_matches_numpy():
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 30):
        values = sorted(rng.random(n))
        for q in (0, 0.25, 0.5, 0.9, 1):
            assert quantile(values, q) == pytest.approx(np.quantile(values, q))


def test_format_seconds():
    assert [format_seconds(s) for s in (2.5, 0.0123, 4.56e-5, 7e-9, 0)] == [
        "2.5 s",
        "12.3 ms",
        "45.6 us",
        "7 ns",
        "0 ns",
    ]
