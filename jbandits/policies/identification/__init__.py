"""Best-arm identification (fixed budget / fixed confidence) and top-m policies."""

from jbandits import schedules
from jbandits.policies._index import IndexState
from jbandits.policies.identification._halving import HalvingState
from jbandits.policies.identification.gape import gape, gape_oracle_params
from jbandits.policies.identification.gape_v import (
    gape_v,
    gape_v_oracle_params,
)
from jbandits.policies.identification.sar import SARState, sar
from jbandits.policies.identification.sar import prepare as _sar_prepare
from jbandits.policies.identification.sequential_halving import (
    halving_schedule,
    halving_schedule_by_k,
    sequential_halving,
)
from jbandits.policies.identification.sequential_halving import (
    prepare as _halving_prepare,
)
from jbandits.policies.identification.shadavar import prepare as _shadavar_prepare
from jbandits.policies.identification.shadavar import shadavar
from jbandits.policies.identification.shvar import prepare as _shvar_prepare
from jbandits.policies.identification.shvar import shvar
from jbandits.policies.identification.successive_rejects import (
    SRState,
    sr_schedule,
    sr_schedule_by_k,
    successive_rejects,
)
from jbandits.policies.identification.successive_rejects import (
    prepare as _sr_prepare,
)
from jbandits.policies.identification.ucb_e import ucb_e, ucb_e_oracle_a
from jbandits.policies.identification.ugape import (
    UGapEbState,
    UGapEcState,
    select_arm,
    ugapeb,
    ugapeb_oracle_a,
    ugapec,
)
from jbandits.policies.identification.ugape import min_budget as _ugapeb_min_budget
from jbandits.policies.identification.vbr import VBRState, vbr_provisional
from jbandits.policies.identification.vbr import prepare as _vbr_prepare


def _sr_min_budget(num_real_arms: int, **kwargs) -> int:
    del kwargs
    return schedules.phases_min_budget(num_real_arms)


def _halving_min_budget(num_real_arms: int, **kwargs) -> int:
    del kwargs
    return schedules.halving_min_budget(num_real_arms)


# name -> factory; every entry is registered in jbandits.registry
POLICIES = {
    "ucb_e": ucb_e,
    "gape": gape,
    "gape_v": gape_v,
    "ugapeb": ugapeb,
    "ugapec": ugapec,
    "successive_rejects": successive_rejects,
    "sar": sar,
    "sequential_halving": sequential_halving,
    "shvar": shvar,
    "shadavar": shadavar,
    "vbr_provisional": vbr_provisional,
}

# name -> host-side hook prepare(num_arms, num_real_arms, budget, **kwargs) -> dict of
# extra factory keyword arguments (the exact schedule of that cell), for factories
# called with a traced budget
PREPARE = {
    "successive_rejects": _sr_prepare,
    "sar": _sar_prepare,
    "sequential_halving": _halving_prepare,
    "shvar": _shvar_prepare,
    "shadavar": _shadavar_prepare,
    "vbr_provisional": _vbr_prepare,
}

# name -> min_budget(num_real_arms, **kwargs) -> int: the smallest budget whose
# schedule exists (a smaller one leaves the policy idle: no pull, output -1); the
# entry points refuse smaller budgets (jbandits.registry.check_budgets)
MIN_BUDGET = {
    "successive_rejects": _sr_min_budget,
    "sar": _sr_min_budget,
    "vbr_provisional": _sr_min_budget,
    "sequential_halving": _halving_min_budget,
    "shvar": _halving_min_budget,
    "shadavar": _halving_min_budget,
    "ugapeb": _ugapeb_min_budget,
}

__all__ = [
    "HalvingState",
    "IndexState",
    "SARState",
    "SRState",
    "UGapEbState",
    "UGapEcState",
    "VBRState",
    "gape",
    "gape_oracle_params",
    "gape_v",
    "gape_v_oracle_params",
    "halving_schedule",
    "halving_schedule_by_k",
    "sar",
    "select_arm",
    "sequential_halving",
    "shadavar",
    "shvar",
    "sr_schedule",
    "sr_schedule_by_k",
    "successive_rejects",
    "ucb_e",
    "ucb_e_oracle_a",
    "ugapeb",
    "ugapeb_oracle_a",
    "ugapec",
    "vbr_provisional",
]
