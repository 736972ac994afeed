"""Search spaces: bounded hyper-parameters and their coordinates for the tuner.

The tuner works in *normalised coordinates* ``z`` (one float per parameter) in which a
step of 0.1 means about a tenth of the range, whatever the units:

* :class:`Box` ``(lo, hi)``: ``z = (theta - lo) / (hi - lo)``, clipped to [0, 1];
* :class:`LogSpace` ``(lo, hi)``: ``z = log(theta / lo) / log(hi / lo)``, clipped to
  [0, 1] (scale parameters: alpha, epsilon, psi, exploration constants);
* :class:`Logit` ``(lo, hi)``: ``theta = lo + (hi - lo) sigmoid(4 z - 2)``, ``z``
  unbounded (the bounds are never reached; the factor 4 makes the slope at the centre
  equal to a Box's).

A :class:`Space` is a pytree (a dict, possibly nested) of these; ``theta`` is the
matching pytree of floats, handed to the policy factory as keyword arguments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import jax
import numpy as np

from jbandits.analysis.stats import count


@dataclass(frozen=True)
class _Param:
    lo: float
    hi: float

    def __post_init__(self):
        for name in ("lo", "hi"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{type(self).__name__}: {name} must be a number")
            if not math.isfinite(value):
                raise ValueError(f"{type(self).__name__}: {name} must be finite")
        if not self.lo < self.hi:
            raise ValueError(
                f"{type(self).__name__}: need lo < hi, got lo={self.lo}, hi={self.hi}"
            )

    bounded = True  # z is clipped to [0, 1]

    def _edges(self, z, theta):
        """``theta`` with z = 0 and 1 mapped to exactly ``lo`` and ``hi`` and the rest
        kept inside: the maps round (LogSpace(0.1, 10) at z = 1 gave
        10.000000000000005, a value the space's own ``to_z`` refuses)."""
        theta = np.clip(theta, self.lo, self.hi)
        return np.where(z >= 1.0, self.hi, np.where(z <= 0.0, self.lo, theta))

    def contains(self, theta) -> bool:
        return bool(np.all((theta >= self.lo) & (theta <= self.hi)))


@dataclass(frozen=True)
class Box(_Param):
    """A parameter in ``[lo, hi]``, searched on a linear scale."""

    def to_z(self, theta):
        return (np.asarray(theta, np.float64) - self.lo) / (self.hi - self.lo)

    def from_z(self, z):
        z = np.clip(np.asarray(z, np.float64), 0.0, 1.0)
        return self._edges(z, self.lo + z * (self.hi - self.lo))

    def dtheta_dz(self, z):
        return np.full(np.shape(z), self.hi - self.lo)


@dataclass(frozen=True)
class LogSpace(_Param):
    """A positive parameter in ``[lo, hi]``, searched on a log scale."""

    def __post_init__(self):
        super().__post_init__()
        if self.lo <= 0:
            raise ValueError(f"LogSpace: lo must be > 0, got {self.lo}")

    def to_z(self, theta):
        theta = np.asarray(theta, np.float64)
        return np.log(theta / self.lo) / math.log(self.hi / self.lo)

    def from_z(self, z):
        z = np.clip(np.asarray(z, np.float64), 0.0, 1.0)
        return self._edges(z, self.lo * np.exp(z * math.log(self.hi / self.lo)))

    def dtheta_dz(self, z):
        return self.from_z(z) * math.log(self.hi / self.lo)


@dataclass(frozen=True)
class Logit(_Param):
    """A parameter in the open interval ``(lo, hi)`` through a logistic map."""

    bounded = False

    def to_z(self, theta):
        p = (np.asarray(theta, np.float64) - self.lo) / (self.hi - self.lo)
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return (np.log(p) - np.log1p(-p) + 2.0) / 4.0

    def from_z(self, z):
        p = 1.0 / (1.0 + np.exp(-(4.0 * np.asarray(z, np.float64) - 2.0)))
        return self.lo + p * (self.hi - self.lo)

    def dtheta_dz(self, z):
        p = 1.0 / (1.0 + np.exp(-(4.0 * np.asarray(z, np.float64) - 2.0)))
        return 4.0 * p * (1.0 - p) * (self.hi - self.lo)


def _is_param(x) -> bool:
    return isinstance(x, _Param)


class Space:
    """A pytree of :class:`Box` / :class:`LogSpace` / :class:`Logit` leaves.

    Args:
      tree: e.g. ``{"rho": Box(0.1, 2.0), "psi": LogSpace(1.0, 1e4)}``; the top-level
        keys are keyword arguments of the policy factory.

    Raises:
      ValueError: an empty space, a leaf that is not a parameter, or non-string keys.
    """

    def __init__(self, tree):
        if not isinstance(tree, dict) or not tree:
            raise ValueError(
                "the search space must be a non-empty dict such as "
                "{'alpha': LogSpace(0.05, 20.0)}, got " + repr(tree)
            )
        leaves, self.treedef = jax.tree_util.tree_flatten(tree, is_leaf=_is_param)
        for path, leaf in jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_param)[
            0
        ]:
            if not _is_param(leaf):
                raise ValueError(
                    f"space{jax.tree_util.keystr(path)} must be Box, LogSpace or "
                    f"Logit, got {leaf!r}"
                )
        self.params = leaves
        self.tree = tree
        self.names = [
            jax.tree_util.keystr(p)
            for p, _ in jax.tree_util.tree_flatten_with_path(tree, is_leaf=_is_param)[0]
        ]

    @property
    def dim(self) -> int:
        return len(self.params)

    def keys(self) -> list:
        return list(self.tree)

    def to_z(self, theta) -> np.ndarray:
        """``[d]`` coordinates of a ``theta`` pytree (checked: finite, in bounds)."""
        try:
            leaves = self.treedef.flatten_up_to(theta)
        except (ValueError, TypeError) as err:
            raise ValueError(
                f"theta must match the space's structure {self.treedef}, got {theta!r}"
            ) from err
        z = []
        for name, p, v in zip(self.names, self.params, leaves, strict=True):
            v = np.asarray(jax.device_get(v), np.float64)
            if v.shape != ():
                raise ValueError(f"theta{name} must be a scalar, got shape {v.shape}")
            if not np.isfinite(v):
                raise ValueError(f"theta{name} must be finite, got {v}")
            if not (p.lo <= v <= p.hi) or (not p.bounded and v in (p.lo, p.hi)):
                raise ValueError(
                    f"theta{name} = {float(v)} lies outside its range "
                    f"[{p.lo}, {p.hi}] ({type(p).__name__})"
                )
            z.append(float(p.to_z(v)))
        return np.asarray(z)

    def from_z(self, z) -> dict:
        """The ``theta`` pytree (Python floats) of coordinates ``z [d]``."""
        z = np.asarray(z, np.float64).reshape(self.dim)
        return jax.tree_util.tree_unflatten(
            self.treedef,
            [float(p.from_z(zi)) for p, zi in zip(self.params, z, strict=True)],
        )

    def to_natural(self, z) -> np.ndarray:
        """``[d]`` parameter values (natural units, flattened) of coordinates ``z``."""
        z = np.asarray(z, np.float64).reshape(self.dim)
        return np.asarray([p.from_z(zi) for p, zi in zip(self.params, z, strict=True)])

    def batch_from_z(self, z) -> dict:
        """``theta`` pytree with ``[P]`` leaves for coordinates ``z [P, d]``."""
        z = np.asarray(z, np.float64).reshape(-1, self.dim)
        return jax.tree_util.tree_unflatten(
            self.treedef, [p.from_z(z[:, i]) for i, p in enumerate(self.params)]
        )

    def clip(self, z) -> np.ndarray:
        """Bounded coordinates clipped to [0, 1] (Logit ones to [-2, 3])."""
        z = np.array(z, np.float64)
        for i, p in enumerate(self.params):
            z[..., i] = (
                np.clip(z[..., i], 0.0, 1.0)
                if p.bounded
                else np.clip(z[..., i], -2.0, 3.0)
            )
        return z

    def jacobian(self, z) -> np.ndarray:
        """``[d]`` diagonal ``d theta / d z`` at ``z``."""
        z = np.asarray(z, np.float64).reshape(self.dim)
        return np.asarray(
            [p.dtheta_dz(zi) for p, zi in zip(self.params, z, strict=True)]
        )

    def grid(self, points_per_dim: int) -> np.ndarray:
        """``[points ** d, d]`` coordinates of an even grid (cell centres in [0, 1])."""
        n = count("points_per_dim", points_per_dim)
        axis = (np.arange(n) + 0.5) / n
        mesh = np.meshgrid(*([axis] * self.dim), indexing="ij")
        return np.stack([m.reshape(-1) for m in mesh], axis=-1)

    def __repr__(self) -> str:
        return f"Space({self.tree!r})"
