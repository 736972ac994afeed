"""Thresholding-bandit policies (which arms have mean >= tau)."""

from jbandits.policies.blocks.index import IndexState
from jbandits.policies.thresholding.apt import apt
from jbandits.policies.thresholding.augucb import (
    AugUCBState,
    AugUCBTables,
    augucb,
    augucb_tables,
    augucb_tables_by_k,
)
from jbandits.policies.thresholding.csar import CSARState, csar, csar_schedule_by_k
from jbandits.policies.thresholding.lsa import lsa
from jbandits.policies.thresholding.optkg import OptKGState, optkg
from jbandits.policies.thresholding.ua import UAState, ua
from jbandits.policies.thresholding.ucbe import ucbe
from jbandits.policies.thresholding.ucbev import ucbev
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
    "ucbev",
    "uniform",
]
