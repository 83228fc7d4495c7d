"""Build the fictional 業務委託契約 samples (DOCX, PDF, cp932 TXT) the knowledge demo ships.

Run: `.venv/bin/python core/samples/knowledge/build_samples.py`. Every name in the contract is fictional.
"""

from __future__ import annotations

import io
from pathlib import Path

import docx

HERE = Path(__file__).resolve().parent
TITLE = "システム運用保守業務委託契約書"
PARTIES = (
    "株式会社みなと商事（以下「甲」という。）と株式会社さくらシステムズ（以下「乙」という。）は、"
    "甲のシステム運用保守業務の委託に関し、次のとおり契約（以下「本契約」という。）を締結する。"
)
ARTICLES: list[tuple[str, list[str]]] = [
    (
        "第1条（目的）",
        [
            "甲は、甲の販売管理システム（以下「本システム」という。）の運用保守業務（以下「本業務」という。）を乙に委託し、乙はこれを受託する。"
        ],
    ),
    (
        "第2条（業務内容）",
        [
            "本業務の内容は、本システムの監視、障害対応、定期保守及び問合せ対応とし、詳細は別紙業務仕様書に定める。"
        ],
    ),
    (
        "第3条（委託期間）",
        [
            "本契約の有効期間は、2027年4月1日から2030年3月31日までの3年間とする。",
            "期間満了の3か月前までにいずれの当事者からも書面による申出がない場合、本契約は同一条件で1年間更新され、以後も同様とする。",
        ],
    ),
    ("第4条（委託料）", ["甲は乙に対し、本業務の対価として下表の委託料を支払う。"]),
    (
        "第5条（再委託）",
        [
            "乙は、甲の事前の書面による承諾を得ることなく、本業務の全部又は一部を第三者に再委託してはならない。"
        ],
    ),
    ("第6条（報告）", ["乙は、毎月末日までに当月の本業務の実施状況を書面により甲に報告する。"]),
    (
        "第7条（知的財産権）",
        ["本業務の遂行により生じた成果物の著作権は、委託料の完済をもって乙から甲に移転する。"],
    ),
    (
        "第8条（秘密保持）",
        [
            "甲及び乙は、本契約に関して相手方から開示された技術上又は営業上の情報を秘密として保持し、相手方の事前の書面による承諾なく第三者に開示又は漏えいしてはならない。",
            "前項の義務は、本契約終了後3年間存続する。",
        ],
    ),
    (
        "第9条（個人情報）",
        [
            "乙は、本業務の遂行にあたり取り扱う個人情報を、個人情報の保護に関する法律その他の関係法令に従い適切に取り扱う。"
        ],
    ),
    (
        "第10条（損害賠償）",
        [
            "甲又は乙は、本契約に違反して相手方に損害を与えた場合、その損害を賠償する。",
            "ただし、乙の賠償額は、損害発生の直前1か月分の委託料を上限とする。",
        ],
    ),
    (
        "第11条（契約解除）",
        [
            "甲又は乙は、相手方が本契約に違反し、相当の期間を定めて催告したにもかかわらず是正されないときは、本契約を解除することができる。"
        ],
    ),
    (
        "第12条（協議）",
        ["本契約に定めのない事項又は本契約の解釈に疑義が生じた事項については、甲乙誠実に協議して解決する。"],
    ),
]
FEE_TABLE = [
    ["区分", "金額（税別）", "支払条件"],
    ["月額保守料", "金800,000円", "毎月末締め翌月末払い"],
    ["障害対応（時間外）", "1時間あたり金15,000円", "実績に基づき翌月末払い"],
]
CLOSING = "本契約締結の証として本書2通を作成し、甲乙記名押印の上、各1通を保有する。"
SIGNATURES = [
    "2027年3月15日",
    "甲　東京都港区海岸一丁目2番3号　株式会社みなと商事　代表取締役　港 太郎",
    "乙　東京都千代田区桜田四丁目5番6号　株式会社さくらシステムズ　代表取締役　桜井 花子",
]


def contract_lines() -> list[str]:
    """The contract as plain lines (title, preamble, articles, the fee table as rows, closing)."""
    lines = [TITLE, PARTIES]
    for heading, body in ARTICLES:
        lines.append(heading)
        lines.extend(body if len(body) == 1 else [f"{i}　{t}" for i, t in enumerate(body, start=1)])
        if heading.startswith("第4条"):
            lines.extend(" | ".join(row) for row in FEE_TABLE)
    return [*lines, CLOSING, *SIGNATURES]


def build_docx() -> bytes:
    document = docx.Document()
    document.add_heading(TITLE, level=1)
    document.add_paragraph(PARTIES)
    for heading, body in ARTICLES:
        document.add_heading(heading, level=2)
        for i, text in enumerate(body, start=1):
            document.add_paragraph(text if len(body) == 1 else f"{i}　{text}")
        if heading.startswith("第4条"):
            table = document.add_table(rows=len(FEE_TABLE), cols=len(FEE_TABLE[0]))
            table.style = "Table Grid"
            for r, row in enumerate(FEE_TABLE):
                for c, value in enumerate(row):
                    table.cell(r, c).text = value
    document.add_paragraph(CLOSING)
    for line in SIGNATURES:
        document.add_paragraph(line)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def build_pdf(lines: list[str] | None = None) -> bytes:
    """A Japanese PDF with reportlab's built-in CID font (no font download)."""
    from reportlab.lib.pagesizes import A4  # noqa: PLC0415 - reportlab is an optional [test] extra
    from reportlab.pdfbase import pdfmetrics  # noqa: PLC0415 - reportlab is an optional [test] extra
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont  # noqa: PLC0415 - reportlab is an optional [test] extra
    from reportlab.pdfgen import canvas  # noqa: PLC0415 - reportlab is an optional [test] extra

    pdfmetrics.registerFont(UnicodeCIDFont("HeiseiMin-W3"))
    buf = io.BytesIO()
    pdf = canvas.Canvas(buf, pagesize=A4, invariant=1)  # invariant: byte-stable output
    _, height = A4
    y = height - 60
    for line in lines if lines is not None else contract_lines():
        for start in range(0, len(line), 40):  # wrap at 40 full-width characters
            if y < 60:
                pdf.showPage()
                y = height - 60
            pdf.setFont("HeiseiMin-W3", 10.5)
            pdf.drawString(50, y, line[start : start + 40])
            y -= 17
        y -= 4
    pdf.save()
    return buf.getvalue()


def build_txt() -> bytes:
    return ("\r\n".join(contract_lines()) + "\r\n").encode("cp932")


def main() -> None:
    (HERE / "service_agreement.docx").write_bytes(build_docx())
    (HERE / "service_agreement.pdf").write_bytes(build_pdf())
    (HERE / "service_agreement_sjis.txt").write_bytes(build_txt())
    print("written:", ", ".join(p.name for p in sorted(HERE.glob("service_agreement*"))))


if __name__ == "__main__":
    main()
