"""Best-arm identification (fixed budget / fixed confidence) and top-m policies."""

from jbandits.policies.blocks.index import IndexState
from jbandits.policies.identification._halving import HalvingState
from jbandits.policies.identification.gape import gape
from jbandits.policies.identification.gape_v import gape_v
from jbandits.policies.identification.sar import SARState, sar
from jbandits.policies.identification.sequential_halving import (
    halving_schedule,
    halving_schedule_by_k,
    sequential_halving,
)
from jbandits.policies.identification.shadavar import shadavar
from jbandits.policies.identification.shvar import shvar
from jbandits.policies.identification.successive_rejects import (
    SRState,
    sr_schedule,
    sr_schedule_by_k,
    successive_rejects,
)
from jbandits.policies.identification.ucb_e import ucb_e
from jbandits.policies.identification.ugape import (
    UGapEbState,
    UGapEcState,
    select_arm,
    ugapeb,
    ugapec,
)
from jbandits.policies.identification.vbr import VBRState, vbr_provisional

__all__ = [
    "HalvingState",
    "IndexState",
    "SARState",
    "SRState",
    "UGapEbState",
    "UGapEcState",
    "VBRState",
    "gape",
    "gape_v",
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
    "ugapeb",
    "ugapec",
    "vbr_provisional",
]
