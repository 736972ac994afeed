"""Thresholding-bandit policies (which arms have mean >= tau)."""

from jbandits.policies.thresholding.apt import APTState, apt
from jbandits.policies.thresholding.lsa import LSAState, lsa
from jbandits.policies.thresholding.ua import UAState, ua
from jbandits.policies.thresholding.uniform import UniformState, uniform

__all__ = ["APTState", "LSAState", "UAState", "UniformState", "apt", "lsa", "ua", "uniform"]

# name -> factory; every entry is registered in jbandits.registry
POLICIES = {
    "uniform": uniform,
    "ua": ua,
    "apt": apt,
    "lsa": lsa,
}
