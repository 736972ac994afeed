"""Best-arm identification (fixed budget / fixed confidence) and top-m policies."""

from jbandits.policies.identification.gape import GapEState, gape
from jbandits.policies.identification.gape_v import GapEVState, gape_v
from jbandits.policies.identification.ucb_e import UCBEState, ucb_e
from jbandits.policies.identification.ugape import (
    UGapEbState,
    UGapEcState,
    select_arm,
    ugapeb,
    ugapec,
)

# name -> factory; every entry is registered in jbandits.registry
POLICIES = {
    "ucb_e": ucb_e,
    "gape": gape,
    "gape_v": gape_v,
    "ugapeb": ugapeb,
    "ugapec": ugapec,
}

__all__ = [
    "GapEState",
    "GapEVState",
    "UCBEState",
    "UGapEbState",
    "UGapEcState",
    "gape",
    "gape_v",
    "select_arm",
    "ucb_e",
    "ugapeb",
    "ugapec",
]
