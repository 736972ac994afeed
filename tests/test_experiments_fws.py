"""The FWS reproduction (``fws-bai``, experiments/fws.py): its "competitive" claim rule
on made-up numbers, and a tiny run end to end (tmp output)."""

import os

import numpy as np
import pytest
from test_experiments_fixed_confidence import _run

from experiments import _claims as C
from experiments import fws


def test_competitive_claim_reads_fws_against_1_15_track_and_stop():
    rng = np.random.default_rng(0)
    base = rng.normal(1000.0, 100.0, 500)
    labels = list(fws.LABELS[:2])
    close = {(d, fws.LABELS[1]): base for d in fws.DELTAS}
    close |= {(d, fws.LABELS[0]): 1.05 * base for d in fws.DELTAS}
    errs = {(d, lab): np.zeros(500, bool) for d in fws.DELTAS for lab in labels}
    assert fws._claims(close, errs, labels)[0].verdict == C.REPRODUCED
    far = close | {(d, fws.LABELS[0]): 1.3 * base for d in fws.DELTAS}
    assert fws._claims(far, errs, labels)[0].verdict == C.NOT_REPRODUCED


@pytest.mark.slow  # compiles two programs
def test_fws_tiny(tmp_path):
    out, arrays = _run(
        tmp_path, "fws-bai", cap=20_000, algorithms=("FWS", "T-a-S (D-Tracking)")
    )
    for delta in fws.DELTAS:
        stop = arrays[f"{delta}/FWS/stop"]
        assert stop.shape == (6,) and np.all(stop > 5)
    with open(os.path.join(out, "table.md")) as f:
        text = f.read()
    assert "GK16 Table 1" in text and "competitive" in text
