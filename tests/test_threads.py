"""Several sessions in one process share the thread pool and may run at the same time."""
import threading

import numpy as np

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
        except AssertionError as e:  # collected and re-raised in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
