"""A sweep written to a store, run as a separate process by tests/test_runner.py.

Usage: runner_worker.py STORE [PROCESS_ID NUM_PROCESSES PORT]
"""

import sys

import jax
import numpy as np

import jbandits


def work(store, progress=False):
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 10))
    policy = jbandits.make("apt", num_arms=10, threshold=0.5, epsilon=0.05)
    return jbandits.simulate(
        policy,
        bandit,
        params,
        jax.random.key(0),
        budget=400,
        num_reps=4096,
        batch_size=64,
        num_checkpoints=4,
        metric=jbandits.analysis.metrics.thresholding(0.5),
        store=store,
        progress=progress,
    )


if __name__ == "__main__":
    if len(sys.argv) > 2:
        pid, num, port = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        jax.distributed.initialize(
            coordinator_address=f"127.0.0.1:{port}", num_processes=num, process_id=pid
        )
        try:  # several processes exchange chunks through a store: None is refused
            work(None)
        except ValueError as err:
            assert "store=PATH" in str(err), err
            open(f"{sys.argv[1]}-refused-{pid}", "w").close()
    res = work(sys.argv[1])
    np.save(f"{sys.argv[1]}/result-{jax.process_index()}.npy", res.metrics["error"])
    if len(sys.argv) > 2:
        jax.distributed.shutdown()
