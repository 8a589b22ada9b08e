"""Answers lead with the decision for the default workload, not with the largest number: on a
GPU where cudnn.benchmark is no faster for ResNet-50 training in fp32 but 1.14× faster in
strict FP32 and for another model, home and the cudnn.benchmark page lead with "leave the
default (off)" for ResNet-50 in fp32, and name the others as where it pays."""

from __future__ import annotations

from typing import Any

from bench.report import analysis
from bench.report.input.load import load_reports
from bench.report.judge.defaults import default_workload
from bench.report.judge.rows import Pair
from bench.report.questions.answers import judge
from bench.report.questions.home.model import Topic
from bench.report.vocabulary import Action

from .builders import axes, cell, env_for

ENV = env_for("gpu-box", "run-1")
TIMES = [0.100, 0.1005, 0.0995, 0.1002, 0.0998]


def _pair(speedup: float, **where: Any) -> list[dict[str, object]]:
    base = axes(batch_size=128, **where)
    return (cell(ENV, base, TIMES)
            + cell(ENV, {**base, "cudnn_benchmark": "on"}, [t / speedup for t in TIMES]))


def _answers(write_tree: Any) -> Any:
    rows = (_pair(0.99) + _pair(1.14, precision="fp32-strict")
            + _pair(1.08, model="convnext_tiny") + _pair(1.00, mode="infer"))
    return judge(analysis.analyse(load_reports(write_tree([(ENV, rows, [])]))))


def test_the_default_workload_is_fp32_training_of_the_model_measured_most(
        write_tree: Any) -> None:
    a = analysis.analyse(load_reports(write_tree([(ENV, _pair(0.99) + _pair(
        1.14, precision="fp32-strict") + _pair(1.08, model="convnext_tiny")
        + _pair(1.00, mode="infer"), [])])))
    pair = default_workload(a.benchmark)
    assert isinstance(pair, Pair)
    assert (pair.model, pair.mode, pair.precision) == ("resnet50", "train", "fp32")


def test_home_and_the_cudnn_page_lead_with_the_default_decision(write_tree: Any) -> None:
    answers = _answers(write_tree)
    (head,) = [h for h in answers.home.headlines if h.topic is Topic.BENCHMARK]
    assert (head.pair.model, head.pair.precision) == ("resnet50", "fp32")
    assert head.decision is not None and head.decision.main.action == Action.LEAVE_DEFAULT
    pays = {(g.main.model_family, g.main.precision) for g in head.pays}
    assert ("convnext", "fp32") in pays and ("resnet", "fp32-strict") in pays
    (section,) = answers.cudnn.sections
    assert section.summary.quoted is not None and section.summary.quoted.model == "resnet50"
    assert section.decision is not None and section.decision == head.decision
    assert {g.main.precision for g in section.pays} == {"fp32", "fp32-strict"}
