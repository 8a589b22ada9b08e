"""prices: the documented TOML format, one-line errors, and per-dollar figures."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from bench.report.input import prices

GOOD = """
[machines."nvidia-h200"]
price_usd = 35000
note = "list price"

[machines."cpu-laptop"]
usd_per_hour = 0.5

[machines."nvidia-h200-1a2b3c4d"]
price_usd = 30000
"""


def test_parse_and_match(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text(GOOD)
    table = prices.load_prices(path)
    assert table["nvidia-h200"] == prices.Price("nvidia-h200", 35000.0, None, "list price", None)
    assert table["cpu-laptop"].usd_per_hour == 0.5
    # a page slug (one fingerprint) wins over the machine slug
    assert prices.match(table, "nvidia-h200", "nvidia-h200-1a2b3c4d").price_usd == 30000.0
    assert prices.match(table, "nvidia-h200", "nvidia-h200-99999999").price_usd == 35000.0
    assert prices.match(table, "other", "other-00000000") is None
    assert prices.unknown_keys(table, ["nvidia-h200"], ["nvidia-h200-1a2b3c4d"]) == ["cpu-laptop"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            '[machines."a"]\nprice_usd = -5\n',
            "machines.'a'.price_usd: must be a positive number, got -5",
        ),
        ('[machines."a"]\nprice_usd = "35k"\n', "must be a positive number, got '35k'"),
        ('[machines."a"]\nprice_usd = true\n', "must be a positive number, got True"),
        ('[machines."a"]\nnote = "x"\n', "needs price_usd or usd_per_hour"),
        ('[machines."a"]\nprice_usd = 1\nprice = 2\n', "unknown key(s) price"),
        ('[machine."a"]\nprice_usd = 1\n', "unknown top-level key(s) machine"),
        ('[machines."a"]\nprice_usd = 1\nnote = 3\n', "machines.'a'.note: must be a string"),
        ('[machines."a"]\nprice_usd = = 1\n', "prices.toml:2: invalid TOML"),
        ("machines = 3\n", "machines must be a table"),
    ],
)
def test_errors_are_one_clear_line(text, words):
    with pytest.raises(prices.PriceError) as info:
        prices.parse_prices(text, "prices.toml")
    message = str(info.value)
    assert message.startswith("prices.toml")
    assert words in message, message
    assert "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(prices.PriceError, match="cannot read prices file"):
        prices.load_prices(tmp_path / "nope.toml")


def test_per_dollar():
    table = prices.parse_prices(GOOD)
    throughput = pd.DataFrame(
        {
            "machine": ["nvidia-h200", "cpu-laptop", "unpriced"],
            "page": ["nvidia-h200-1a2b3c4d", "cpu-laptop-12345678", "unpriced-00000000"],
            "samples_per_s": [3000.0, 50.0, 10.0],
        }
    )
    out = prices.per_dollar(throughput, table).set_index("machine")
    assert list(out.index) == ["nvidia-h200", "cpu-laptop"]  # unpriced rows are left out
    assert out.loc["nvidia-h200", "images_per_s_per_usd"] == pytest.approx(3000 / 30000)
    assert math.isnan(out.loc["nvidia-h200", "images_per_usd"])
    assert out.loc["cpu-laptop", "images_per_usd"] == pytest.approx(50 * 3600 / 0.5)
    assert out.loc["cpu-laptop", "price_key"] == "cpu-laptop"


def test_cost_per_million_samples_is_hardware_time_plus_measured_energy():
    table = prices.parse_prices('electricity_usd_per_kwh = 0.18\n[machines."gpu"]\n'
                                'usd_per_hour = 3.6\n[machines."cpu"]\nusd_per_hour = 0.36\n'
                                'electricity_usd_per_kwh = 0.36\n[machines."old"]\n'
                                'usd_per_hour = 1.0\n')
    assert table["gpu"].usd_per_kwh == 0.18 and table["cpu"].usd_per_kwh == 0.36
    throughput = pd.DataFrame({
        "machine": ["gpu", "cpu", "old"], "page": ["gpu-1", "cpu-1", "old-1"],
        "samples_per_s": [1000.0, 100.0, 10.0],
        "joules_per_sample": [0.5, 2.0, float("nan")],  # "old" measured no energy
    })
    out = prices.per_dollar(throughput, table).set_index("machine")
    # 10^6 samples at 1000/s = 1000 s = 1/3.6 h at $3.6/h = $1
    assert out.loc["gpu", "usd_per_million_hardware"] == pytest.approx(1.0)
    # 10^6 × 0.5 J = 5·10^5 J = 0.1389 kWh at $0.18 = $0.025
    assert out.loc["gpu", "usd_per_million_energy"] == pytest.approx(0.025)
    assert out.loc["gpu", "usd_per_million"] == pytest.approx(1.025)
    assert out.loc["cpu", "usd_per_million_energy"] == pytest.approx(2e6 / 3.6e6 * 0.36)
    assert math.isnan(out.loc["old", "usd_per_million_energy"])  # never estimated
    assert math.isnan(out.loc["old", "usd_per_million"])
    assert out.loc["old", "usd_per_million_hardware"] == pytest.approx(1e6 / 36000)


def test_an_electricity_price_must_be_positive():
    with pytest.raises(prices.PriceError, match="electricity_usd_per_kwh: must be a positive"):
        prices.parse_prices('electricity_usd_per_kwh = 0\n[machines."a"]\nprice_usd = 1\n')
