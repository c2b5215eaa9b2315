"""The concurrency contract of docs/concurrency.md: sessions in several threads run at the same
time (sharing the thread pool); one session shared by threads serialises its runs; close() waits
for a run in flight, and later runs raise InvalidArgumentError. Every exception raised in a
worker thread fails the test, not only AssertionError."""
import threading
import time

import numpy as np
import pytest

import tiny_models
from helpers import assert_close, run_ort, scale_atol

import mace
from mace import zoo


def test_two_sessions_running_concurrently_stay_correct():
    model = zoo.build("mobilenet_v2", width=0.25, size=64)
    x = np.random.default_rng(0).uniform(0, 1, (1, 3, 64, 64)).astype(np.float32)
    ref = run_ort(model, {"input": x})[0]
    sessions = [mace.Session(model, num_threads=2) for _ in range(2)]
    errors = []

    def work(sess):
        try:
            for _ in range(10):
                assert_close(sess.run(x), ref, atol=scale_atol(ref))  # a whole network
        except BaseException as e:  # noqa: BLE001 - collected and re-raised in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def run_in_threads(targets):
    """Runs each callable in its own thread; re-raises the first exception any of them raised
    (whatever its type) once all have finished."""
    errors = []

    def wrap(fn):
        try:
            fn()
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(fn,)) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish within 120 s"
    if errors:
        raise errors[0]


def test_run_in_threads_fails_on_any_exception():
    def boom():
        raise KeyError("not an AssertionError")
    with pytest.raises(KeyError):
        run_in_threads([boom, lambda: None])


def test_one_session_shared_by_threads_serialises_runs():
    """Eight threads share one session, each with its own batch size (so every run re-infers
    shapes and rebinds the arena) and its own values; every result matches NumPy's."""
    sess = mace.Session(tiny_models.chain_model(), num_threads=2)

    def work(i):
        def fn():
            for r in range(25):
                x = tiny_models.rand_x(seed=100 * i + r, shape=[1 + i % 4, 3, 4, 5])
                got = sess.run(x)
                np.testing.assert_allclose(got, tiny_models.chain_ref(x), rtol=1e-6, atol=1e-6)
        return fn
    run_in_threads([work(i) for i in range(8)])


def test_sessions_in_threads_each_own_model():
    """Sessions created and used in their own threads, two different models at once."""
    def work(i):
        def fn():
            make, ref = ((tiny_models.relu_model, tiny_models.relu_ref) if i % 2 else
                         (tiny_models.two_output_model, tiny_models.two_output_ref))
            with mace.Session(make(), num_threads=1 + i % 2) as sess:
                for r in range(20):
                    x = tiny_models.rand_x(seed=i * 1000 + r)
                    got, want = sess.run(x), ref(x)
                    for g, w in zip(got if isinstance(got, tuple) else (got,),
                                    want if isinstance(want, tuple) else (want,)):
                        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
        return fn
    run_in_threads([work(i) for i in range(6)])


def test_close_while_another_thread_runs():
    """close() waits for the run in flight; that thread's later runs raise InvalidArgumentError
    (a MaceError and a ValueError), never a crash or a wrong result."""
    model = zoo.build("mobilenet_v2", width=0.25, size=64)
    x = np.random.default_rng(1).uniform(0, 1, (1, 3, 64, 64)).astype(np.float32)
    ref = run_ort(model, {"input": x})[0]
    sess = mace.Session(model, num_threads=2)
    started, outcome = threading.Event(), {}

    def runner():
        ok = 0
        while True:
            try:
                y = sess.run(x)
            except mace.InvalidArgumentError as e:
                assert "closed" in str(e)
                break
            assert_close(y, ref, atol=scale_atol(ref))
            ok += 1
            started.set()
        outcome["ok"] = ok

    def closer():
        assert started.wait(60), "the runner never completed a run"
        time.sleep(0.01)
        sess.close()
        sess.close()  # twice is harmless
    run_in_threads([runner, closer])
    assert outcome["ok"] >= 1
    with pytest.raises(mace.InvalidArgumentError, match="closed"):
        sess.run(x)
