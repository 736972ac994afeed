"""Standalone NumPy Chernoff-Racing simulator (GK16 Sec. 6), vectorised over runs.

Independent of the library on purpose (its own KL and threshold), so that it checks
the library's Chernoff-Racing rather than repeating it; the readings it measured are
in ``benchmarks/notes_fixed_confidence.md``. Usage::

    python -m benchmarks.fc_runs.chernoff_racing_readings '{"ties": "first"}' 3000 0

Readings (keyword options of `simulate`):
  clock: 'r' (beta(r)), 't' (beta(total pulls), the authors' code), 'ract'
         (beta(r x active arms)), 'rK' (beta(r x K))
  ties:  'random'  arms relabelled at random per run, first index among ties (our lib)
         'first'   arms in the paper's order (best first), first index among ties
                   (the 2016 BAIalgos.jl: find(MuR.==MuWorst)[1])
         'last'    arms in the paper's order, last index among ties
  elim:  'worst'   eliminate only the empirical worst when Z(best, worst) > beta
         'all'     eliminate every active arm b with Z(best, b) > beta
         'glrstop' eliminate worst as 'worst', but also stop as soon as
                   min_b Z(best, b) > beta (Chernoff stopping on the race)
  test_from: first round at which the test is made (1 = ours, 2 = authors' code)
  thr:   'practical' log((log s + 1)/delta); 'logplus1' log(log(s + 1)/delta);
         'gk16' log(2 s (K - 1)/delta)
"""

from __future__ import annotations

import numpy as np

EPS = 1e-15


def kl(p, q):
    p = np.clip(p, EPS, 1 - EPS)
    q = np.clip(q, EPS, 1 - EPS)
    return p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))


def beta(s, delta, thr, K):
    s = np.asarray(s, dtype=float)
    if thr == "practical":
        return np.log((np.log(s) + 1.0) / delta)
    if thr == "logplus1":  # log(log(s + 1)/delta)
        return np.log(np.log(s + 1.0) / delta)
    if thr == "gk16":
        return np.log(2.0 * s * (K - 1) / delta)
    raise ValueError(thr)


def simulate(
    mu,
    n_runs,
    *,
    delta=0.1,
    clock="r",
    ties="random",
    elim="worst",
    test_from=1,
    thr="practical",
    seed=0,
    cap=10**7,
):
    rng = np.random.default_rng(seed)
    mu = np.asarray(mu, float)
    K = len(mu)
    if ties == "random":
        perm = np.argsort(rng.random((n_runs, K)), axis=1)
        mus = mu[perm]  # mus[n, j] = mean of label j
        best_label = np.argmax(mus, axis=1)
    else:
        mus = np.tile(mu, (n_runs, 1))
        best_label = np.full(n_runs, int(np.argmax(mu)))
    S = np.zeros((n_runs, K))
    active = np.ones((n_runs, K), bool)
    t = np.zeros(n_runs, np.int64)
    r = 0
    stop_t = np.zeros(n_runs, np.int64)
    reco = np.full(n_runs, -1)
    live = np.arange(n_runs)  # indices of runs still going
    while live.size:
        r += 1
        a = active[live]
        draws = rng.random((live.size, K)) < mus[live]
        S[live] += draws & a
        t[live] += a.sum(1)
        if r < test_from:
            continue
        m = S[live] / r
        if ties == "last":
            mr = m[:, ::-1]
            ar = a[:, ::-1]
            best = K - 1 - np.argmax(np.where(ar, mr, -np.inf), 1)
            worst = K - 1 - np.argmin(np.where(ar, mr, np.inf), 1)
        else:
            best = np.argmax(np.where(a, m, -np.inf), 1)
            worst = np.argmin(np.where(a, m, np.inf), 1)
        if clock == "r":
            s = np.full(live.size, r)
        elif clock == "t":
            s = t[live]
        elif clock == "ract":
            s = r * a.sum(1)
        elif clock == "rK":
            s = np.full(live.size, r * K)
        else:
            raise ValueError(clock)
        b = beta(s, delta, thr, K)
        idx = np.arange(live.size)
        mb = m[idx, best][:, None]
        mid = (mb + m) / 2.0
        Z = r * (kl(mb, mid) + kl(m, mid))  # [n, K]
        if elim == "worst":
            drop = (Z[idx, worst] > b) & (best != worst)
            a[idx[drop], worst[drop]] = False
        elif elim == "all":
            kill = (b[:, None] < Z) & a
            kill[idx, best] = False
            a &= ~kill
        elif elim == "glrstop":
            zo = np.where(a, Z, np.inf)
            zo[idx, best] = np.inf
            stopnow = zo.min(1) > b
            drop = (Z[idx, worst] > b) & (best != worst)
            a[idx[drop], worst[drop]] = False
            a[stopnow] = False
            a[idx[stopnow], best[stopnow]] = True
        else:
            raise ValueError(elim)
        active[live] = a
        done = (a.sum(1) <= 1) | (t[live] >= cap)
        if done.any():
            d = live[done]
            stop_t[d] = t[d]
            ad = active[d]
            md = np.where(ad, S[d], -np.inf)
            reco[d] = np.argmax(md, 1)
            live = live[~done]
    err = reco != best_label
    return stop_t, err


def summary(x, err):
    n = len(x)
    m = x.mean()
    se = x.std(ddof=1) / np.sqrt(n)
    return dict(
        n=n,
        mean=m,
        lo=m - 1.96 * se,
        hi=m + 1.96 * se,
        err=err.mean(),
        median=float(np.median(x)),
        max=int(x.max()),
    )


MU1 = [0.5, 0.45, 0.43, 0.4]
MU2 = [0.3, 0.21, 0.2, 0.19, 0.18]

if __name__ == "__main__":
    import json
    import sys
    import time

    cfg = json.loads(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    for name, mu in (("mu1", MU1), ("mu2", MU2)):
        t0 = time.time()
        x, e = simulate(mu, n, seed=seed, **cfg)
        s = summary(x, e)
        print(
            json.dumps(
                dict(
                    cfg=cfg,
                    inst=name,
                    seed=seed,
                    secs=round(time.time() - t0, 1),
                    **{
                        k: (round(v, 4) if isinstance(v, float) else v)
                        for k, v in s.items()
                    },
                )
            ),
            flush=True,
        )
