"""Thresholding-bandit policies (which arms have mean >= tau)."""

from jbandits import schedules
from jbandits.policies._index import IndexState
from jbandits.policies.thresholding.apt import apt
from jbandits.policies.thresholding.augucb import (
    AugUCBState,
    AugUCBTables,
    augucb,
    augucb_tables,
    augucb_tables_by_k,
)
from jbandits.policies.thresholding.augucb import prepare as _augucb_prepare
from jbandits.policies.thresholding.csar import CSARState, csar, csar_schedule_by_k
from jbandits.policies.thresholding.csar import prepare as _csar_prepare
from jbandits.policies.thresholding.lsa import lsa
from jbandits.policies.thresholding.optkg import OptKGState, optkg
from jbandits.policies.thresholding.ua import UAState, ua
from jbandits.policies.thresholding.ucbe import ucbe, ucbe_oracle_a
from jbandits.policies.thresholding.ucbev import ucbev, ucbev_oracle_a
from jbandits.policies.thresholding.uniform import UniformState, uniform

__all__ = [
    "IndexState",
    "AugUCBState",
    "AugUCBTables",
    "CSARState",
    "OptKGState",
    "UAState",
    "UniformState",
    "apt",
    "augucb",
    "augucb_tables",
    "augucb_tables_by_k",
    "csar",
    "csar_schedule_by_k",
    "lsa",
    "optkg",
    "ua",
    "ucbe",
    "ucbe_oracle_a",
    "ucbev",
    "ucbev_oracle_a",
    "uniform",
]

# name -> factory; every entry is registered in jbandits.registry
POLICIES = {
    "uniform": uniform,
    "ua": ua,
    "apt": apt,
    "lsa": lsa,
    "augucb": augucb,
    "ucbe": ucbe,
    "ucbev": ucbev,
    "csar": csar,
    "optkg": optkg,
}

# name -> host-side hook prepare(num_arms, num_real_arms, budget, **kwargs) -> dict of
# extra factory keyword arguments (the exact tables of that cell), for factories
# called with a traced budget
PREPARE = {
    "augucb": _augucb_prepare,
    "csar": _csar_prepare,
}


def _phases_min_budget(num_real_arms: int, **kwargs) -> int:
    del kwargs
    return schedules.phases_min_budget(num_real_arms)


# name -> min_budget(num_real_arms, **kwargs) -> int: the smallest budget whose
# schedule exists (see jbandits.registry.check_budgets)
MIN_BUDGET = {
    "augucb": _phases_min_budget,
    "csar": _phases_min_budget,
}
