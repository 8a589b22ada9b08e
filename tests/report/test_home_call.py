"""Home's grid weighs a switch's numerics beside its speed (``questions.home.model.call_of``):
a switch that is faster but whose outputs drift past their tolerance is on only if the
reader's outputs hold; one whose outputs agree, or were not checked, is decided by speed."""

from __future__ import annotations

from typing import Any

import pytest

from bench.report.judge.machines import Machine
from bench.report.judge.numerics import NumericPair
from bench.report.questions.home.model import Headline, Topic, call_of
from bench.report.vocabulary import Call, Verdict

BOX = Machine(page="box", machine="box", fingerprint_id="1", title="box", hardware="CPU")


def _headline(verdict: Verdict, **numerics: Any) -> Headline:
    pair = NumericPair(fingerprint_id="1", page="box", axis="precision", device="cpu",
                       mode="train", precision="fp32", baseline_value="fp32",
                       variant_value="amp-bf16", verdict=str(verdict), speedup=1.55,
                       ci_low=1.30, ci_high=1.79, **numerics)
    return Headline(Topic.PRECISION, BOX, pair, judged=1, same=1, devices=("cpu",))


#: A bf16 training cell whose loss ends 1.09% off the reference's (bf16's tolerance: 1%).
DRIFTING = dict(var_num_n=1, var_num_reference="fp32-strict", var_num_rel_err_worst=0.47,
                var_num_cosine_worst=0.89, var_num_loss_rel_diff_worst=0.0109,
                var_num_param_drift_worst=0.077, var_num_train_steps=5)
AGREEING = dict(DRIFTING, var_num_rel_err_worst=0.009, var_num_cosine_worst=0.99995,
                var_num_loss_rel_diff_worst=0.001, var_num_param_drift_worst=0.002)


@pytest.mark.parametrize(("verdict", "numerics", "call"), [
    (Verdict.FASTER, DRIFTING, Call.ON_IF_OUTPUTS_HOLD),
    (Verdict.FASTER, AGREEING, Call.ON),
    (Verdict.FASTER, {}, Call.ON),  # not checked: speed alone, as before the check
    (Verdict.NO_CLEAR_DIFFERENCE, DRIFTING, Call.OFF),
])
def test_a_faster_switch_that_drifts_is_on_only_if_the_outputs_hold(
        verdict: Verdict, numerics: dict[str, Any], call: Call) -> None:
    h = _headline(verdict, **numerics)
    assert call_of(h) is call
    assert h.drifts is (numerics is DRIFTING)
    assert (h.numerics is None) is (not numerics)
