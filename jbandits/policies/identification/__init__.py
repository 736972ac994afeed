"""Best-arm identification (fixed budget / fixed confidence) and top-m policies."""

from jbandits.policies.identification._halving import HalvingState
from jbandits.policies.identification.gape import GapEState, gape, gape_oracle_params
from jbandits.policies.identification.gape_v import (
    GapEVState,
    gape_v,
    gape_v_oracle_params,
)
from jbandits.policies.identification.sar import SARState, sar
from jbandits.policies.identification.sequential_halving import (
    halving_schedule,
    sequential_halving,
)
from jbandits.policies.identification.shadavar import shadavar
from jbandits.policies.identification.shvar import shvar
from jbandits.policies.identification.successive_rejects import (
    SRState,
    sr_schedule,
    successive_rejects,
)
from jbandits.policies.identification.ucb_e import UCBEState, ucb_e, ucb_e_oracle_a
from jbandits.policies.identification.ugape import (
    UGapEbState,
    UGapEcState,
    select_arm,
    ugapeb,
    ugapeb_oracle_a,
    ugapec,
)
from jbandits.policies.identification.vbr import VBRState, vbr_provisional

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

__all__ = [
    "GapEState",
    "GapEVState",
    "HalvingState",
    "SARState",
    "SRState",
    "UCBEState",
    "UGapEbState",
    "UGapEcState",
    "VBRState",
    "gape",
    "gape_oracle_params",
    "gape_v",
    "gape_v_oracle_params",
    "halving_schedule",
    "sar",
    "select_arm",
    "sequential_halving",
    "shadavar",
    "shvar",
    "sr_schedule",
    "successive_rejects",
    "ucb_e",
    "ucb_e_oracle_a",
    "ugapeb",
    "ugapeb_oracle_a",
    "ugapec",
    "vbr_provisional",
]
