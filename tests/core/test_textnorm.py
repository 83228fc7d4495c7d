"""core.text.textnorm: radicals and compatibility ideographs repaired, NFKC, the folded matching form (issue 12 item 1)."""

from __future__ import annotations

import unicodedata

import pytest

from core.text.textnorm import (
    KANGXI_RADICALS,
    RADICALS_SUPPLEMENT,
    fold,
    has_radicals,
    normalize_text,
    repair_ideographs,
)


def test_kangxi_and_supplement_radicals_become_kanji():
    assert repair_ideographs("⽉額") == "月額"  # U+2F49 KANGXI RADICAL MOON
    assert repair_ideographs("⺬") == "示"  # NFKC leaves U+2EAC alone
    assert unicodedata.normalize("NFKC", "⺬") == "⺬"
    assert repair_ideographs("⻑期、⻝品、⻄⽇本、⻘⾊") == "長期、食品、西日本、青色"
    assert repair_ideographs("⺠法・⻨・⻩⾊・⻭・⻯・⻲・⻤") == "民法・麦・黄色・歯・竜・亀・鬼"


def test_repair_keeps_everything_else_as_written():
    text = "第４条（委託料）ＮＤＡ　ｶﾀｶﾅ 﨑"
    assert repair_ideographs(text) == text


def test_every_assigned_radical_is_mapped_to_a_cjk_ideograph():
    assigned = [cp for cp in range(0x2E80, 0x2F00) if unicodedata.name(chr(cp), None)]
    assert sorted(RADICALS_SUPPLEMENT) == assigned
    radicals = "".join(chr(cp) for cp in [*assigned, *KANGXI_RADICALS] if unicodedata.name(chr(cp), None))
    repaired = repair_ideographs(radicals)
    assert not has_radicals(repaired)
    assert all(unicodedata.name(c).startswith("CJK UNIFIED IDEOGRAPH") for c in repaired)


def test_compatibility_ideographs_nfkc_maps_are_repaired():
    assert repair_ideographs("\uf907") == "\u9f9c"  # 龜 compatibility -> unified


@pytest.mark.parametrize(
    "a,b",
    [
        ("ＮＤＡ", "NDA"),
        ("第８条", "第8条"),
        ("ｶﾞｿﾘﾝ", "ガソリン"),
        ("⽉額", "月額"),
        ("髙﨑", "高崎"),
    ],
)
def test_fold_makes_width_case_and_variants_equal(a, b):
    assert fold(a) == fold(b)


def test_normalize_text_is_nfkc_after_repair():
    assert normalize_text("（目的）⽉額８０万円") == "(目的)月額80万円"
    assert normalize_text("﨑") == "﨑"  # kept where shown; folded only for matching
