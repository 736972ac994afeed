"""Cumulative-regret policies."""

from jbandits.policies.regret._index import IndexState
from jbandits.policies.regret.bayes_ucb import BayesUCBState, bayes_ucb
from jbandits.policies.regret.dmed import DMEDState, dmed
from jbandits.policies.regret.eucbv import EUCBVState, eucbv, eucbv_schedule
from jbandits.policies.regret.improved import (
    UCBImprovedState,
    ucb_improved,
    ucb_improved_schedule,
)
from jbandits.policies.regret.klucb import klucb
from jbandits.policies.regret.median_elimination import (
    MedianEliminationState,
    median_elimination,
)
from jbandits.policies.regret.moss import moss
from jbandits.policies.regret.ocucb import ocucb
from jbandits.policies.regret.thompson import ThompsonState, thompson
from jbandits.policies.regret.ucb import ucb1
from jbandits.policies.regret.ucbv import ucbv

__all__ = [
    "BayesUCBState",
    "DMEDState",
    "ThompsonState",
    "bayes_ucb",
    "dmed",
    "klucb",
    "thompson",
    "EUCBVState",
    "IndexState",
    "MedianEliminationState",
    "UCBImprovedState",
    "eucbv",
    "eucbv_schedule",
    "median_elimination",
    "moss",
    "ocucb",
    "ucb1",
    "ucb_improved",
    "ucb_improved_schedule",
    "ucbv",
]
