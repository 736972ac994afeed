"""Registry: names, make, errors, and top-level exports of every registered factory."""

import pytest

import jbandits


def test_every_registered_factory_is_exported_at_top_level():
    for name in jbandits.names():
        assert getattr(jbandits, name) is jbandits.factory(name), name
        assert name in jbandits.__all__


def test_make_builds_a_policy_with_a_setting():
    policy = jbandits.make("apt", num_arms=5, threshold=0.5)
    assert isinstance(policy, jbandits.Policy) and policy.setting == "thresholding"


def test_unknown_and_duplicate_names_raise():
    with pytest.raises(ValueError, match="unknown policy"):
        jbandits.make("no-such-policy", num_arms=3)
    with pytest.raises(ValueError, match="duplicate"):
        jbandits.register("apt", jbandits.apt)


def test_names_cover_the_three_families():
    names = set(jbandits.names())
    assert {"apt", "augucb", "lsa", "csar", "optkg"} <= names
    assert {"successive_rejects", "sequential_halving", "shadavar", "ugapec"} <= names
    assert {"eucbv", "thompson", "klucb", "dmed", "median_elimination"} <= names
