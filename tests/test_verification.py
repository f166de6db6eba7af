"""Runtime verification: where the pass goes, JitModule's RuntimeVerificationError (threads,
nesting, callbacks), the message that reaches stderr before abort() elsewhere, and the lit switch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")

from support.paths import LIT, REPO, RUNTIME_DIR  # noqa: E402

from memref_runtime import JitModule, RuntimeVerificationError  # noqa: E402
from memref_runtime.jit.lowering import DEFAULT_PIPELINE, TENSOR_PIPELINE, lower_to_llvm  # noqa: E402
from memref_runtime.jit.verification import PASS, with_runtime_verification  # noqa: E402
from memref_runtime.settings import RUNTIME_VERIFICATION_ENV  # noqa: E402

pytestmark = pytest.mark.jit

KERNELS = r"""
func.func @store_at(%m: memref<?xf32>, %i: index, %x: f32) {
  memref.store %x, %m[%i] : memref<?xf32>
  return
}
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%c : memref<?xf32>)
  return
}
"""
OUT_OF_BOUNDS = "^ out-of-bounds access"


@pytest.fixture(autouse=True)
def no_suite_default(monkeypatch):
    monkeypatch.delenv(RUNTIME_VERIFICATION_ENV, raising=False)


# --- the pipeline ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pipeline, before",
    [
        (DEFAULT_PIPELINE, "builtin.module("),  # no bufferization: first
        (TENSOR_PIPELINE, "convert-bufferization-to-memref,"),  # right after bufferization
        (
            "builtin.module(func.func(canonicalize,cse),one-shot-bufferize{dialect-filter=tensor,linalg},"
            "convert-linalg-to-loops)",
            "one-shot-bufferize{dialect-filter=tensor,linalg},",
        ),
    ],
)
def test_the_pass_goes_after_bufferization(pipeline, before):
    result = with_runtime_verification(pipeline)
    assert result.replace(PASS + ",", "") == pipeline
    assert before + PASS + "," in result
    assert with_runtime_verification(result) == result  # added once


def test_a_pipeline_not_on_builtin_module_is_refused():
    with pytest.raises(
        ValueError,
        match=r"runtime_verification: expected a pipeline of the form "
        r"builtin.module\(...\), got 'func.func\(cse\)'",
    ):
        with_runtime_verification("func.func(cse)")


@pytest.mark.parametrize(
    "setting, env, checked", [(None, None, False), (None, "1", True), (False, "1", False), (True, None, True)]
)
def test_lower_to_llvm_checks_when_told_or_when_the_suite_says(monkeypatch, setting, env, checked):
    if env is not None:
        monkeypatch.setenv(RUNTIME_VERIFICATION_ENV, env)
    lowered = str(lower_to_llvm(KERNELS, runtime_verification=setting))
    assert ("llvm.call @abort()" in lowered) is checked
    assert ("@__memref_runtime_guarded_call" in lowered) is checked  # nothing added without asserts


@pytest.mark.parametrize("setting, env, checked", [(None, None, False), (None, "1", True), (False, "1", False)])
def test_jit_module_default(monkeypatch, setting, env, checked):
    if env is not None:
        monkeypatch.setenv(RUNTIME_VERIFICATION_ENV, env)
    jit = JitModule(KERNELS, runtime_verification=setting)
    assert jit.runtime_verification is checked
    a = np.zeros(2, np.float32)
    jit.store_at(a, 1, 1.0)  # the first call compiles; the guard exists only with checks
    assert (jit._linked.guard is not None) is checked


# --- JitModule: the call raises -------------------------------------------------------------


def test_an_out_of_bounds_store_raises_before_the_store():
    jit = JitModule(KERNELS, runtime_verification=True)
    a = np.zeros(4, np.float32)
    with pytest.raises(RuntimeVerificationError) as info:
        jit.store_at(a, 4, 7.0)
    error = info.value
    assert error.function == "store_at"
    assert error.message.splitlines() == [
        "ERROR: Runtime op verification failed",
        "memref.store %arg2, %arg0[%arg1] : memref<?xf32>",
        OUT_OF_BOUNDS,
        'Location: loc("-":3:3)',
    ]
    assert str(error).startswith("store_at() stopped at a failed check; nothing after it ran:\nERROR: ")
    assert not a.any()
    jit.store_at(a, 3, 7.0)  # the module still works
    assert a.tolist() == [0, 0, 0, 7]


def test_dynamic_sizes_that_disagree_raise():
    jit = JitModule(KERNELS, runtime_verification=True)
    c = np.zeros(4, np.float32)
    with pytest.raises(
        RuntimeVerificationError,
        match="dimension #0 of input/output operand #1 is incompatible with inferred dimension size",
    ):
        jit.add(np.ones(4, np.float32), np.ones(3, np.float32), c)
    assert not c.any()


def test_a_bound_call_raises_too():
    jit = JitModule(KERNELS, runtime_verification=True)
    bound = jit.store_at.bind(np.zeros(2, np.float32), 5, 1.0)
    with pytest.raises(RuntimeVerificationError):
        bound()


def test_a_cf_assert_of_the_module_raises_without_verification():
    jit = JitModule(r"""
func.func @positive(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %ok = arith.cmpi sgt, %x, %c0 : i32
  cf.assert %ok, "expected a positive number"
  return %x : i32
}""")
    assert jit.runtime_verification is False
    assert jit.positive(3) == 3
    with pytest.raises(RuntimeVerificationError) as info:
        jit.positive(-3)
    assert info.value.message == "expected a positive number"


def test_threads_each_get_their_own_outcome():
    jit = JitModule(KERNELS, runtime_verification=True)
    outcomes: dict = {}

    def work(n):
        a = np.zeros(4, np.float32)
        raised = 0
        for i in range(300):
            try:
                jit.store_at(a, (i + n) % 8, 1.0)  # indices 4..7 fail
            except RuntimeVerificationError:
                raised += 1
        outcomes[n] = (raised, a.tolist())

    expected = {n: (sum((i + n) % 8 >= 4 for i in range(300)), [1, 1, 1, 1]) for n in range(4)}

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes == expected


CALLS_BACK = (
    KERNELS
    + r"""
func.func private @visit(memref<?xf32>, index)
func.func @outer(%m: memref<?xf32>, %i: index) {
  call @visit(%m, %i) : (memref<?xf32>, index) -> ()
  %c0 = arith.constant 0 : index
  %c9 = arith.constant 9 : index
  memref.store %c9f, %m[%c0] : memref<?xf32>
  return
}
""".replace("%c9 = arith.constant 9 : index", "%c9f = arith.constant 9.0 : f32")
)


def test_a_failed_check_in_a_nested_call_raises_through_the_outer_call():
    jit = JitModule(CALLS_BACK, runtime_verification=True)
    jit.register_callback("visit", lambda m, i: jit.store_at(m, i, 5.0))
    a = np.zeros(3, np.float32)
    jit.outer(a, 1)
    assert a.tolist() == [9, 5, 0]
    with pytest.raises(RuntimeVerificationError, match="out-of-bounds access") as info:
        jit.outer(a, 3)
    assert "raised in callback @visit" in "".join(getattr(info.value, "__notes__", [""]))
    # The callback's error does not stop the outer kernel (register_callback's contract).
    assert a.tolist() == [9, 5, 0]


def test_a_callback_error_comes_first_when_the_call_then_stops_at_a_check():
    jit = JitModule(
        KERNELS
        + r"""
func.func private @index_of(i64) -> i64
func.func @store_before(%m: memref<?xf32>) {
  %c1 = arith.constant 1 : i64
  %j = call @index_of(%c1) : (i64) -> i64
  %minus = arith.constant -1 : i64
  %k = arith.addi %j, %minus : i64
  %i = arith.index_cast %k : i64 to index
  %x = arith.constant 1.0 : f32
  memref.store %x, %m[%i] : memref<?xf32>
  return
}""",
        runtime_verification=True,
    )

    def index_of(n):
        raise KeyError("no index")  # the kernel goes on with 0, and stores at -1

    jit.register_callback("index_of", index_of)
    with pytest.raises(KeyError) as info:
        jit.store_before(np.zeros(2, np.float32))
    assert any(
        note.startswith("then store_before() stopped: store_before() stopped at a failed check")
        for note in info.value.__notes__
    )


# --- elsewhere: the message, then abort() ----------------------------------------------------


def run_python(code: str, *args: str) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter with C's stdout buffered, as under lit (no PYTHONUNBUFFERED,
    which makes CPython unbuffer C's stdio too)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(RUNTIME_DIR), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


ABORTS = """
import ctypes, sys
import numpy as np
from mlir.execution_engine import ExecutionEngine
from mlir.ir import Context, Module
from memref_runtime.testing import lower, memref_arg
MODULE = '''
func.func private @putchar(i32) -> i32
func.func @store_at(%m: memref<?xf32>, %i: index) attributes {llvm.emit_c_interface} {
  %c = arith.constant 65 : i32
  %r = call @putchar(%c) : (i32) -> i32
  %x = arith.constant 1.0 : f32
  memref.store %x, %m[%i] : memref<?xf32>
  return
}'''
with Context():
    engine = ExecutionEngine(lower(Module.parse(MODULE), runtime_verification=True))
a = np.zeros(2, np.float32)
print("before", flush=True)
engine.invoke("store_at", memref_arg(a), ctypes.pointer(ctypes.c_int64(int(sys.argv[1]))))
print("after", flush=True)
"""


def test_elsewhere_a_failed_check_writes_its_message_then_aborts():
    fine = run_python(ABORTS, "1")
    assert fine.returncode == 0 and fine.stdout == "before\nafter\nA"  # C's stdout, flushed at exit
    out = run_python(ABORTS, "2")
    assert out.returncode == -signal.SIGABRT
    # putchar's 'A' sat in C's stdout buffer: flushed before the message, not lost with abort().
    assert out.stdout == "before\nA"
    assert out.stderr.startswith("ERROR: Runtime op verification failed\nmemref.store")
    assert OUT_OF_BOUNDS in out.stderr


def test_a_check_failing_in_code_a_callback_calls_directly_aborts_instead_of_jumping():
    """A guard below the callback must not be jumped to across Python's frames."""
    out = run_python(f"""
import ctypes, numpy as np
from memref_runtime import JitModule, get_ranked_memref_descriptor
jit = JitModule({CALLS_BACK!r}, runtime_verification=True)
def visit(m, i):
    pointer = ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(m)))
    jit.engine.invoke("store_at", pointer, ctypes.pointer(ctypes.c_int64(i)), ctypes.pointer(ctypes.c_float(1)))
jit.register_callback("visit", visit)
jit.outer(np.zeros(3, np.float32), 7)
print("not reached")
""")
    assert out.returncode == -signal.SIGABRT
    assert OUT_OF_BOUNDS in out.stderr and "not reached" not in out.stdout


def test_a_module_whose_own_symbol_clashes_is_refused():
    with pytest.raises(ValueError, match="the module defines @strlen"):
        lower_to_llvm(KERNELS + "func.func private @strlen(i32) -> i32\n", runtime_verification=True)


# --- lit -D runtime_verification=1 ----------------------------------------------------------


@pytest.mark.skipif(LIT is None, reason="lit is not installed")
@pytest.mark.parametrize("flags, result", [((), "UNSUPPORTED"), (("-D", "runtime_verification=1"), "PASS")])
def test_the_lit_switch_turns_the_checks_on_for_the_suite(tmp_path, flags, result):
    """lit_tests/runtime_verification_suite.py: JitModule() raises, testing.lower checks."""
    out = subprocess.run(
        [LIT, "-v", *flags, "-D", f"exec_root={tmp_path}", "lit_tests/runtime_verification_suite.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert f"{result}: memref-runtime :: lit_tests/runtime_verification_suite.py" in out.stdout, out.stdout
