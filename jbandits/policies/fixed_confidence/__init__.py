"""Fixed-confidence best-arm identification: sample until a stopping rule certifies
the best arm at confidence 1 - delta (Track-and-Stop, racing, LUCB, lil'UCB, the
top-two family, uniform sampling with GLR stopping).

Every policy here stops inside the batched run (``state.arm = -1``, absorbing); the
engine's ``num_pulls`` is the stopping time and the run's budget is the cap.
"""
