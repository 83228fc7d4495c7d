"""Generate the fictional owner's manuals (JSON chunks) from structured data. Deterministic.

Run: .venv/bin/python core/samples/diagnosis/build_manuals.py
Writes vehicles.json and manuals/<vehicle_id>.json next to this file. The vehicles and makers are
fictional; the text follows the usual structure of Japanese owner's manuals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# Topics shared by the vehicles: chapter, section, type, warning, tag (which vehicles), text, keys.
TOPICS: list[dict[str, Any]] = json.loads((HERE / "manual_topics.json").read_text(encoding="utf-8"))

VEHICLES: list[dict[str, Any]] = [
    {
        "vehicle_id": "minato-soleil-2022",
        "make": "ミナト自動車",
        "model": "ソレイユ",
        "year": 2022,
        "body": "コンパクトハッチバック",
        "photo": "photos/minato-soleil-2022.svg",
        "tags": ["all", "ice", "cvt", "ff"],
        "vars": {
            "power": "1.5L 直列4気筒ガソリンエンジン",
            "trans": "CVT（無段変速機）",
            "drive": "FF（前輪駆動）",
            "tire_f": "230",
            "tire_r": "220",
            "tire_size": "185/60R15",
            "oil_grade": "0W-20（API SP）",
            "oil_cap": "3.4L（オイルフィルター交換時は3.6L）",
            "oil_interval": "15,000kmまたは1年",
            "fuel": "無鉛レギュラーガソリン",
            "tank": "40L",
            "size": "全長4,050mm × 全幅1,695mm × 全高1,500mm",
            "weight": "1,080kg",
            "battery12": "36B20L",
            "range_note": "WLTCモード燃費 20.4km/L",
            "wiper": "運転席 600mm、助手席 350mm",
            "pad_limit": "2mm",
        },
    },
    {
        "vehicle_id": "hokuto-grantz-2021",
        "make": "北斗モータース",
        "model": "グランツ",
        "year": 2021,
        "body": "ミドルサイズSUV",
        "photo": "photos/hokuto-grantz-2021.svg",
        "tags": ["all", "ice", "at", "awd"],
        "vars": {
            "power": "2.5L 直列4気筒ガソリンエンジン",
            "trans": "8速オートマチックトランスミッション",
            "drive": "AWD（電子制御4輪駆動）",
            "tire_f": "240",
            "tire_r": "240",
            "tire_size": "225/60R18",
            "oil_grade": "0W-20（API SP）",
            "oil_cap": "4.3L（オイルフィルター交換時は4.6L）",
            "oil_interval": "10,000kmまたは1年",
            "fuel": "無鉛レギュラーガソリン",
            "tank": "60L",
            "size": "全長4,640mm × 全幅1,855mm × 全高1,700mm",
            "weight": "1,620kg",
            "battery12": "80D23L",
            "range_note": "WLTCモード燃費 14.2km/L",
            "wiper": "運転席 650mm、助手席 400mm",
            "pad_limit": "2mm",
        },
    },
    {
        "vehicle_id": "asahi-lumina-2023",
        "make": "アサヒEV",
        "model": "ルミナ",
        "year": 2023,
        "body": "電気自動車（ハッチバック）",
        "photo": "photos/asahi-lumina-2023.svg",
        "tags": ["all", "ev", "ff"],
        "vars": {
            "power": "交流同期モーター（最高出力150kW）",
            "trans": "減速機（1段）",
            "drive": "FF（前輪駆動）",
            "tire_f": "250",
            "tire_r": "250",
            "tire_size": "215/50R17",
            "battery_kwh": "60kWh",
            "ev_range": "450km（WLTCモード）",
            "ac_charge": "6.0kW",
            "dc_charge": "CHAdeMO 最大90kW",
            "size": "全長4,300mm × 全幅1,790mm × 全高1,560mm",
            "weight": "1,720kg",
            "battery12": "LN1",
            "range_note": "一充電走行距離 450km（WLTCモード）",
            "wiper": "運転席 650mm、助手席 380mm",
            "pad_limit": "2mm",
        },
    },
]


def index_text(topic: dict[str, Any], values: dict[str, Any]) -> str:
    """What the search embeds: the heading twice, the index terms and the first sentence.

    The offline character n-gram embedding favors short texts, so the whole paragraph would drown
    the heading; the full text is still stored and shown.
    """
    first = topic["text"].format(**values).split("。")[0]
    return f"{topic['section']}。{topic['section']} {topic['keys']}：{first}"


def build_manual(vehicle: dict[str, Any]) -> list[dict[str, Any]]:
    """Chunks of one vehicle: every topic whose tag the vehicle has, numbered and paged in order."""
    values = {
        "make": vehicle["make"],
        "model": vehicle["model"],
        "year": str(vehicle["year"]),
        **vehicle["vars"],
    }
    chunks: list[dict[str, Any]] = []
    page = 12
    chapter = None
    for topic in TOPICS:
        if topic["tag"] not in vehicle["tags"]:
            continue
        if topic["chapter"] != chapter:
            chapter = topic["chapter"]
            page += 4
        else:
            page += 1
        chunks.append(
            {
                "id": f"{vehicle['vehicle_id']}-{len(chunks) + 1:03d}",
                "vehicle_id": vehicle["vehicle_id"],
                "page": page,
                "chapter": chapter,
                "section": topic["section"],
                "content_type": topic["type"],
                "has_warning": topic["warning"],
                "text": topic["text"].format(**values),
                "index_text": index_text(topic, values),
            }
        )
    return chunks


def main() -> None:
    (HERE / "manuals").mkdir(exist_ok=True)
    catalog = []
    for vehicle in VEHICLES:
        chunks = build_manual(vehicle)
        out = HERE / "manuals" / f"{vehicle['vehicle_id']}.json"
        out.write_text(json.dumps(chunks, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        entry = {k: vehicle[k] for k in ("vehicle_id", "make", "model", "year", "body", "photo")}
        entry["manual"] = f"manuals/{vehicle['vehicle_id']}.json"
        entry["powertrain"] = vehicle["vars"]["power"]
        entry["electric"] = "ev" in vehicle["tags"]
        catalog.append(entry)
        print(f"{vehicle['vehicle_id']}: {len(chunks)} chunks")
    (HERE / "vehicles.json").write_text(
        json.dumps(catalog, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
