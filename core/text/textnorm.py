"""One Japanese text normalizer: ideograph repair, NFKC, and the folded form for matching.

PDFs printed by Chromium or exported by Word often carry Kangxi radicals (U+2F00-2FDF) and CJK Radicals
Supplement characters (U+2E80-2EFF) where the author wrote ordinary kanji (「⽉額」 for 「月額」): the font
draws both code points with one glyph and the PDF's ToUnicode map names the lower one. NFKC maps the Kangxi
block back but leaves all of the Radicals Supplement except two (⺟, ⻳), and CJK compatibility ideographs
such as 﨑 (U+FA11) are left alone by NFKC as well. Three levels:

- `repair_ideographs(text)`: only the radical and compatibility code points become the unified ideograph;
  everything else stays as written (attachments: what the model reads and may quote back).
- `normalize_text(text)`: repair + NFKC (full-width letters and digits to ASCII, half-width kana to full).
- `fold(text)`: normalize_text + lower case + the 12 compatibility ideographs NFKC keeps (﨑 -> 崎): the key
  for search and matching only, never shown.
"""

from __future__ import annotations

import unicodedata

# CJK Radicals Supplement -> the unified ideograph it stands for (after Unicode's EquivalentUnifiedIdeograph
# data, written out; where a radical has no exact equivalent, the ideograph it is a form of).
RADICALS_SUPPLEMENT: dict[int, int] = {
    0x2E80: 0x51AB, 0x2E81: 0x5382, 0x2E82: 0x4E5B, 0x2E83: 0x4E5A, 0x2E84: 0x4E59, 0x2E85: 0x4EBB,
    0x2E86: 0x5182, 0x2E87: 0x20628, 0x2E88: 0x2008A, 0x2E89: 0x5202, 0x2E8A: 0x535C, 0x2E8B: 0x353E,
    0x2E8C: 0x5C0F, 0x2E8D: 0x5C0F, 0x2E8E: 0x5140, 0x2E8F: 0x5C23, 0x2E90: 0x5C22, 0x2E91: 0x21BC2,
    0x2E92: 0x5DF3, 0x2E93: 0x5E7A, 0x2E94: 0x5F51, 0x2E95: 0x5F50, 0x2E96: 0x5FC4, 0x2E97: 0x5FC3,
    0x2E98: 0x624C, 0x2E99: 0x6535, 0x2E9B: 0x65E1, 0x2E9C: 0x65E5, 0x2E9D: 0x6708, 0x2E9E: 0x6B7A,
    0x2E9F: 0x6BCD, 0x2EA0: 0x6C11, 0x2EA1: 0x6C35, 0x2EA2: 0x6C3A, 0x2EA3: 0x706C, 0x2EA4: 0x722B,
    0x2EA5: 0x722B, 0x2EA6: 0x4E2C, 0x2EA7: 0x725B, 0x2EA8: 0x72AD, 0x2EA9: 0x738B, 0x2EAA: 0x758B,
    0x2EAB: 0x7F52, 0x2EAC: 0x793A, 0x2EAD: 0x793B, 0x2EAE: 0x7AF9, 0x2EAF: 0x7CF9, 0x2EB0: 0x7E9F,
    0x2EB1: 0x7F53, 0x2EB2: 0x7F52, 0x2EB3: 0x34C1, 0x2EB4: 0x7F51, 0x2EB5: 0x7F51, 0x2EB6: 0x7F8A,
    0x2EB7: 0x7F8A, 0x2EB8: 0x7F8A, 0x2EB9: 0x8002, 0x2EBA: 0x8080, 0x2EBB: 0x807F, 0x2EBC: 0x6708,
    0x2EBD: 0x81FC, 0x2EBE: 0x8279, 0x2EBF: 0x8279, 0x2EC0: 0x8279, 0x2EC1: 0x864E, 0x2EC2: 0x8864,
    0x2EC3: 0x8980, 0x2EC4: 0x897F, 0x2EC5: 0x89C1, 0x2EC6: 0x89D2, 0x2EC7: 0x89D2, 0x2EC8: 0x8BA0,
    0x2EC9: 0x8D1D, 0x2ECA: 0x8DB3, 0x2ECB: 0x8F66, 0x2ECC: 0x8FB6, 0x2ECD: 0x8FB6, 0x2ECE: 0x8FB6,
    0x2ECF: 0x961D, 0x2ED0: 0x9485, 0x2ED1: 0x9577, 0x2ED2: 0x9578, 0x2ED3: 0x957F, 0x2ED4: 0x95E8,
    0x2ED5: 0x961C, 0x2ED6: 0x961D, 0x2ED7: 0x96E8, 0x2ED8: 0x9752, 0x2ED9: 0x97E6, 0x2EDA: 0x9875,
    0x2EDB: 0x98CE, 0x2EDC: 0x98DE, 0x2EDD: 0x98DF, 0x2EDE: 0x2967F, 0x2EDF: 0x98E0, 0x2EE0: 0x9963,
    0x2EE1: 0x9996, 0x2EE2: 0x9A6C, 0x2EE3: 0x9AA8, 0x2EE4: 0x9B3C, 0x2EE5: 0x9C7C, 0x2EE6: 0x9E1F,
    0x2EE7: 0x5364, 0x2EE8: 0x9EA6, 0x2EE9: 0x9EC4, 0x2EEA: 0x9EFE, 0x2EEB: 0x6589, 0x2EEC: 0x9F50,
    0x2EED: 0x6B6F, 0x2EEE: 0x9F7F, 0x2EEF: 0x7ADC, 0x2EF0: 0x9F99, 0x2EF1: 0x9F9C, 0x2EF2: 0x4E80,
    0x2EF3: 0x9F9F,
}  # fmt: skip

# For matching only: the CJK compatibility ideograph NFKC keeps because it is unified in its own right (﨑), and
# the two variant kanji most common in Japanese names (髙, 𠮷). A name written 﨑 stays 﨑 wherever it is shown.
COMPATIBILITY_FOLD: dict[int, int] = {0xFA11: 0x5D0E, 0x9AD9: 0x9AD8, 0x20BB7: 0x5409}

KANGXI_RADICALS = range(0x2F00, 0x2FE0)
RADICALS_SUPPLEMENT_BLOCK = range(0x2E80, 0x2F00)
COMPATIBILITY_IDEOGRAPHS = (range(0xF900, 0xFB00), range(0x2F800, 0x2FA20))


def _repair_table() -> dict[int, str]:
    table = {src: chr(dst) for src, dst in RADICALS_SUPPLEMENT.items()}
    for block in (KANGXI_RADICALS, *COMPATIBILITY_IDEOGRAPHS):
        for cp in block:
            mapped = unicodedata.normalize("NFKC", chr(cp))
            if mapped != chr(cp):
                table[cp] = mapped
    return table


_REPAIR = _repair_table()
_FOLD = {src: chr(dst) for src, dst in COMPATIBILITY_FOLD.items()}


def repair_ideographs(text: str) -> str:
    """Radicals (Kangxi, Radicals Supplement) and compatibility ideographs -> unified ideographs; nothing else
    changes (「⽉額」 -> 「月額」, 「（目的）」 and 「３年」 stay as written)."""
    return text.translate(_REPAIR)


def normalize_text(text: str) -> str:
    """repair_ideographs + NFKC: the one normalization of Japanese text before it is compared or keyed."""
    return unicodedata.normalize("NFKC", repair_ideographs(text))


def fold(text: str) -> str:
    """The matching form: normalize_text, lower case, and 﨑-style compatibility ideographs folded (ＮＤＡ ->
    nda, 第８条 -> 第8条). Never shown to a person."""
    return normalize_text(text).lower().translate(_FOLD)


def has_radicals(text: str) -> bool:
    """Whether the text still contains a Kangxi radical or a CJK Radicals Supplement character."""
    return any(0x2E80 <= ord(c) <= 0x2FDF for c in text)
