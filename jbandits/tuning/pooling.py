"""Pooling neighbouring points by regression (one parameter).

On common random numbers the means of nearby points share most of their noise, so
the *shape* of the loss along one normalised coordinate is better determined than
any single mean: a smooth fit through every evaluated point, weighted by its
replications, locates the minimum more precisely than the lowest mean does (the
arg-min of noisy means jumps between near-ties; the fit uses all of them).

:func:`fit_min` is a weighted local quadratic (locally weighted regression with a
tricube kernel; Cleveland, JASA 1979), re-centred at its own vertex a few times.
Cells may come from several *blocks* of replications (the rounds of successive
halving: a fresh block of common replications per round); each block gets its own
offset in the fit, which absorbs the noise common to that block's points, so only
the paired (within-block) differences determine the quadratic.
"""

from __future__ import annotations

import numpy as np

BANDWIDTH = 0.35  # half-width of the tricube kernel, normalised units
ITERATIONS = 4  # re-centrings at the vertex


def _tricube(u: np.ndarray) -> np.ndarray:
    u = np.clip(np.abs(u), 0.0, 1.0)
    return (1.0 - u**3) ** 3


def fit_min(
    x,
    y,
    weights=None,
    blocks=None,
    *,
    bandwidth: float = BANDWIDTH,
    iterations: int = ITERATIONS,
) -> float | None:
    """The arg-min of a weighted local quadratic through ``(x, y)``, or None.

    Args:
      x: ``[n]`` coordinates (one parameter, normalised).
      y: ``[n]`` mean losses (one per cell: a point's mean over one block).
      weights: ``[n]`` replications behind each mean (default 1 each).
      blocks: ``[n]`` block ids; cells of one block share their replications and
        get a common offset in the fit (default: one block).
      bandwidth: the kernel's half-width; widened, if needed, to take in the four
        nearest distinct coordinates.
      iterations: re-centrings of the kernel at the fitted vertex.

    The kernel starts at the lowest mean of the block with the most points. Each
    iteration fits ``y = a (x - c)^2 + b (x - c) + offset[block]`` by weighted least
    squares (weights: replications x tricube((x - c) / h)) and moves ``c`` to the
    vertex ``c - b / 2a``, clipped to the span of the points the kernel covers.

    Returns:
      The last vertex, clipped to ``[min x, max x]``; None when there are fewer than
      three distinct coordinates, a non-finite value or weight, or a fit that is not
      convex (``a`` not above 1e-9 of the means' range: a straight line has no
      vertex) or is rank-deficient (the caller keeps its own pick).
    """
    x = np.asarray(x, np.float64).reshape(-1)
    y = np.asarray(y, np.float64).reshape(-1)
    w = np.ones_like(x) if weights is None else np.asarray(weights, np.float64)
    b_id = np.zeros(len(x), np.int64) if blocks is None else np.asarray(blocks)
    if not (len(x) == len(y) == len(w) == len(b_id)):
        raise ValueError("fit_min: x, y, weights and blocks must have one length")
    keep = w > 0
    x, y, w, b_id = x[keep], y[keep], w[keep], b_id[keep]
    if len(np.unique(x)) < 3 or not (np.all(np.isfinite(y)) and np.all(np.isfinite(w))):
        return None
    ids, b_idx, counts = np.unique(b_id, return_inverse=True, return_counts=True)
    main = counts.argmax()
    in_main = b_idx == main
    c = float(x[in_main][np.argmin(y[in_main])])
    distinct = np.unique(x)
    for _ in range(max(1, iterations)):
        near = np.sort(np.abs(distinct - c))
        h = max(bandwidth, near[min(3, len(near) - 1)] * 1.001)
        k = w * _tricube((x - c) / h)
        on = k > 0
        used = np.unique(b_idx[on])
        if len(np.unique(x[on])) < 3:
            return None
        dx = x[on] - c
        cols = [dx**2, dx] + [(b_idx[on] == u).astype(np.float64) for u in used]
        design = np.stack(cols, axis=1)
        sw = np.sqrt(k[on])
        coef, _, rank, _ = np.linalg.lstsq(design * sw[:, None], y[on] * sw, rcond=None)
        if rank < design.shape[1]:
            return None
        a, b = coef[0], coef[1]
        if not (np.isfinite(a) and np.isfinite(b) and a > 1e-9 * np.ptp(y[on])):
            return None
        v = float(np.clip(c - b / (2.0 * a), x[on].min(), x[on].max()))
        done = abs(v - c) < 1e-6
        c = v
        if done:
            break
    return float(np.clip(c, x.min(), x.max()))
