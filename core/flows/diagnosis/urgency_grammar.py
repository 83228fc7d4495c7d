"""How an owner's sentence is put (urgency by meaning, spec 04 §6 fast path): a request, a question whether something is
normal or can happen, a plea for help now, a question at all, and car words typed in hiragana.

The judgement by meaning (core.flows.diagnosis.urgency_meaning) compares a text with labelled examples by what it is
about; these patterns read how it is said, which the nearest examples cannot tell: 「ブレーキを踏まないとシフトが
動かないのは正常？」 lies near 「ブレーキが効かない」 all the same. Each function takes the owner's text as typed.
"""

from __future__ import annotations

import re

from core.flows.diagnosis.urgency_rules import normalize_symptom

# A request about a function or a plan (「…の使い方」「…したい」「…を教えて」) describes no symptom: the examples
# of a failure lie near it all the same (「アクセルを離すと…」), so the judgement stays low and the rules decide.
REQUEST_RE = re.compile(
    r"(使い方|やり方|方法|したい|[てで]おきたい|[てで]おきたくて|っときたい|っときたくて|教えて|おしえて|知りたい|しりたい|しりたし"
    r"|いつ(?!も)|いくら(?!い(?!り|る))|なんぼ|おすすめ"  # not 「…ないくらい効かない」 (くらい after an い)
    # whether the shop sells or stocks something (「荷室に付けるネットって売ってますか？」): a question about buying
    r"|売って(い)?(ます|る|ら)|(取り|とり)?扱って(い)?(ます|る|ら)|置い[てで](い)?(ます|る|ら))"  # 「置いでらが？」 (Tohoku)
    r"[^。]{0,6}[？?]?。?$"
    # not knowing how to use a function (「すまほ と くるま を つなぐ ほうほう が わかりません」), wherever it is said
    r"|(つなぐ|つなげる|繋ぐ|繋げる|(接続|せつぞく|連携|れんけい|設定|せってい|登録|とうろく)\s*する|使う|つかう)\s*"
    r"(ほうほう|方法|やり方|やりかた)\s*(が|も)?\s*"
    r"((わから|分から|解ら)(ない|ん|へん|なく|ず)|(わかり|分かり|解り)ません|わかんな|わかんね)"
    # how far, how deep, how long a car can go (「冠水した道って何センチまでなら走れる？」): a question about limits
    r"|(どのくらい|どれくらい|何センチ|何キロ|何年|いつまで)[^。]{0,12}(まで)?(なら)?(走れ|大丈夫|平気|もつ)"
    # how a safety device works (「エアバッグってどのくらいの衝撃で開くんですか？」): a question about a function
    r"|(どのくらい|どれくらい|どの程度)の[^。]{0,12}?[でに](開|作動|働|効)[^。]{0,8}$"
    # where or how a setting is made (「チャイルドロックが外れないようにしたい。どこで設定するんですか？」)
    r"|(どこで|どこから|どうやって|どの(ボタン|スイッチ|画面|メニュー)で)[^。]{0,10}?(設定|変更|解除|切り替え|切替|登録|オン|オフ)"
    r"(に|を)?(する|でき|します|出来|すれば)?(る|ます|いい|良い)?(ん|の)?(ですか|でしょうか|か)?[？?]?。?$"
)
# An owner asking whether something is normal or still fine (「…けど正常？」「まだ大丈夫？」) doubts it is a fault;
# failures on the same topic lie near it all the same (「ブレーキを踏まないとシフトが動かないのは正常？」 is near
# 「ブレーキが効かない」), so the judgement by meaning goes no higher than medium and the rules decide the rest
# (a brake that does not work is critical by rule however it is asked).
NORMAL_QUESTION_RE = re.compile(
    r"(正常|普通|故障|問題ない|大丈夫|平気|(そう|こう)いうもの|(こんな|そんな)(もん|もの))(ですか|なの|なのか|かな|でしょうか)?[？?]?"
    r"(気になって(い)?(ます|る)|心配で(す)?|不安で(す)?)?[。？?]?$"
    # 「…って普通ですよね？買ったばかりで」: a question mark, then a short word about the thing
    r"|(正常|普通)(ですよね|だよね|よね)[？?][^。？?]{0,12}$"
    # 「…故障じゃなくてそういう機能なんですよね？2秒くらいで動き出すけど」: whether it is a function, not a fault
    r"|(機能|仕様)(なん|な)?(ですよね|だよね|よね|ですか|なの|でしょうか)[？?]?[^。？?]{0,16}$"
    # 「…サイドブレーキ下ろしたら消えました。これで合ってます？」: whether what the owner did or thought is right
    r"|(これで|それで|これ|それ)(って)?(合って|あって)(い)?(ます|る|ん)?(の|ですか|でしょうか|か|よね|ますよね)?[？?]?$"
    # 「走り出すとガチャってドアロックの音がするけど、これ自動なんですね。びっくりした」: the owner has found it is a function
    r"|(機能|仕様|自動)(なん|な)(ですね|だね|やね|じゃね|なんだ|なのか|なんや|なんじゃ)[。！!]?[^。？?]{0,16}[。！!]?$"
    # 「サイドブレーキって完全に戻さないとまずいんですか？今はちゃんと戻してます」: whether a way of using the car is bad
    r"|(ないと|なきゃ|なくちゃ)(まずい|ダメ|だめ|いけない)(ん|の)?(ですか|でしょうか|かな)?[？?][^。？?]{0,12}$"
    r"|これ(って)?(エンジンブレーキ|エンブレ|アイドリングストップ|ABS|abs|クリープ(現象)?)(って(やつ|もの|こと)|というもの)?"
    r"(ですか|なの|かな|でしょうか|ですよね|だよね|よね)?[？?]?$"
    # 「…減速します。そういうものなんですかね。」
    r"|((そう|こう)いう|こんな|そんな)(もの|もん)なん(ですか|でしょうか|かな)(ね)?[？?]?[。？?]?$"
    # the same in dialect, 「こがいなもんなん？」 (Hiroshima), 「こげなもんですか」 (Kyushu), 「こないなもんなんか」 (Kansai)
    r"|(こ|そ)(がいな|げな|ないな|ぎゃん|んげな)(もの|もん)(なん|なの|ですか|でしょうか|かな|なんか|なんやろか|なんじゃろか)[？?]?[。？?]?$"
    r"|(こんな|そんな)(もの|もん)なん[？?][。？?]?$"
    # 「…燃料ポンプに悪いって本当ですか？」: whether something heard is true
    r"|(って|というのは|っていうのは)(本当|ほんと|ホント)(なん)?(ですか|なの|かな|でしょうか)(ね)?[？?]?$"
    # 「…また かかります。こわれて いませんか」: whether it is broken (spaces of a text typed in kana not read)
    r"|(壊れ|こわれ)て\s*(い)?\s*(ませんか|ないですか|ないでしょうか|ないか|ない[？?]|ますか|る[？?])[？?]?$"
    # the same in dialect: 「これ壊れとるとやろか？」 (Hakata), 「壊れとるんじゃろか」 (Hiroshima), 「壊れてるんやろか」 (Kansai)
    r"|(壊れ|こわれ)(とる|ちょる|てる|とう)(と|ん)?(やろ|じゃろ|だろ)(か|う[かね]?)[？?]?$"
    # the first question typed in kana, with its spaces: 「…あかい らんぷが つくんですが これは ふつう ですか」
    r"|(ふつう|せいじょう|こしょう)\s*(です\s*か|なの|なん\s*です\s*か|かな|でしょう\s*か)[？?]?$"
)
# ...but an owner asking whether they may keep driving (「このまま運転して帰っても平気？」「次のSAまで行けば大丈夫？」)
# has a symptom and is about to drive with it: no cap.
KEEP_DRIVING_RE = re.compile(
    r"(このまま|この状態で|今から|これで|ゆっくりなら|少しなら|ちょっとなら)[^。]{0,12}?(運転|走|乗|帰|突っ切|進|行っ|行け|動かし)"
    r"|まで(行|い)け(ば|る)|まで[^。？?、]{0,10}?(走|運転)"  # 「次のSAまで行けば大丈夫？」「次のICまで40キロくらいで走って…」
    r"|(スピード|速度)(を)?(落と|おと|下げ|さげ|緩め|控え)(せば|したら|して|しても|れば)"  # 「スピード落とせば大丈夫ですか？」
    r"|あと[0-9０-９]+(キロ|km|ｋｍ|KM)"  # 「あと300キロくらいあるんですけど」
    r"|(毎日|通勤で?|普段|いつも)[^。]{0,6}?(乗って|使って|運転して)(い)?(ます|る)"  # 「通勤で毎日乗っていますが」
    # 「…床が水浸しで…。エンジンかけても大丈夫ですか？」: whether to start it, as it is
    r"|(エンジン|えんじん)(を)?(かけ|掛け|始動し|スタートし)(ても|て(も)?(いい|大丈夫|平気))"
)


# An owner asking what to do (「どうしたらええんか教えて」) or driving now (「今運転しよるけえ」) makes no plain request:
# 「…教えて」 at the end does not lower the judgement.
WHAT_TO_DO_RE = re.compile(
    r"どう(したら|すれば|すりゃ|しよう|しょう)|(今|いま)[^。]{0,8}?(運転|走行|走って|走っと|走りよ|走りよる|うんてん|はしって|はしっと|はしりよ)"
    r"|(早く|はやく|すぐ|至急|しきゅう|急いで|いそいで)(教え|おしえ)"  # 「…いまはしってる、はやくおしえて」: a plea
)


# A sentence told as happening now (「今、信号待ちで…」「さっきから…」「ってか今、…」): beside a request (「…あとワックスは
# 何がおすすめですか」) it is a report all the same, and is judged on its own.
NOW_RE = re.compile(r"(今|いま)(、|,|まさに|も|現在)|さっき|たった今|ただいま|現在")


def tells_of_now(sentence: str) -> bool:
    return NOW_RE.search(sentence) is not None


# The owner says it can wait (「急ぎではないので次の点検の時で大丈夫です」): where the rules find no danger, the judgement by
# meaning goes no higher than medium (a faint likeness to an urgent example says less than the owner). Not 「急いでない」:
# 「急いでないのにスピードが上がる」 is the driver; nor 「急ぎなんですが」, which asks for haste.
CAN_WAIT_RE = re.compile(
    r"急ぎ(では|じゃ|でわ)(な|あり|ね)|急ぎませ|いそぎ(では|じゃ)(な|ありませ)"
    r"|(次|今度)の(点検|車検|オイル交換|定期点検|入庫|整備)(の(時|とき|際)|で|ついで|まで)(で)?(大丈夫|いい|構|かまい|平気|ok|OK)"
)


def says_it_can_wait(text: str) -> bool:
    """The owner says the matter can wait (CAN_WAIT_RE)."""
    return CAN_WAIT_RE.search(text) is not None


def is_a_request(text: str) -> bool:
    """A request about a function or a plan (REQUEST_RE) that does not ask what to do now (WHAT_TO_DO_RE). A text typed
    in katakana is read in hiragana without its spaces, as it is embedded (with_katakana_loanwords: 「ブレーキパッド コウカン
    ネダン シリタシ ヘンジ マツ」, a telegram asking a price)."""
    if typed_in_katakana(text):
        text = "".join(with_katakana_loanwords(text).split())
    return REQUEST_RE.search(text.strip()) is not None and WHAT_TO_DO_RE.search(text) is None


def doubts_a_fault(text: str) -> bool:
    """The text asks whether what it describes is normal or still fine, and not whether to keep driving with it nor
    what to do while driving now (WHAT_TO_DO_RE)."""
    return (
        NORMAL_QUESTION_RE.search(text.strip()) is not None
        and KEEP_DRIVING_RE.search(text) is None
        and WHAT_TO_DO_RE.search(text) is None
    )


# An owner asking whether something can happen at all (「静電気でガソリンに引火することってあるんですか」, 「はしってる
# とちゅうで くるまが とまらなく なる こと って ある の です か」: spaces are not read) asks about a danger, and reports
# none — unless they ask what to do or are driving now (WHAT_TO_DO_RE).
CAN_IT_HAPPEN_RE = re.compile(
    r"こと(って|は|が|も)?(ある|あり(ます|えます|得ます|える|得る|うる))(ん|の)?(です|でしょう)?(か|[？?])"
    r"|こと(って|は|が|も)?あん(の|だ)?(す|です)?(か|[？?])"  # 「そんなことあんのすか？」 (Tohoku)
    # 「…さびたりしますか」「…傷んだりせえへんの？」: whether it might, said with 「たり」 — not whether a remedy mends it
    # (「エンジンをかけ直したら直ったりしますか？」 has the danger)
    r"|(?<!直っ)(?<!治っ)(?<!なおっ)(?<!戻っ)(?<!もどっ)(た|だ)り(します|する|しない|しません|せん|せえへん|しよる)(ん|の)?(です|でしょう)?(か|[？?])"
)


# An owner asking what a lamp, a mark or a display is (「メーターの中の緑色の車のマーク、あれは何のランプですか？」) asks
# about a function and reports nothing: the lit warning lamps of the examples lie near it all the same, so the judgement
# by meaning goes no higher than medium (a red lamp that is lit with a symptom is the rules' to find, however it is asked).
WHAT_IS_IT_RE = re.compile(
    r"(何の|なんの|なにの|どういう|どんな|何て|なんて|何という|なんという|何ていう|なんていう)\s*"
    r"(ランプ|マーク|表示|意味|機能|記号|警告灯|表示灯|ライト|サイン|アイコン|ボタン|スイッチ)"
    r"(なん|なの|なんや|なんじゃ)?(です|でしょう|だろう|やろ|じゃろ)?(か|かね|かな|の)?[？?]?[。？?]?$"
)


# ...but not when it tells of a red lamp that came on (「赤いランプが点いた。何のランプ？」): a red warning lamp lit now
# is judged as it would be without the question.
RED_LAMP_LIT_RE = re.compile(r"(赤|あか|レッド)[^。]{0,12}?(点い|つい|点灯|点き|つき|光っ|ひかっ)")


def asks_what_it_is(text: str) -> bool:
    """The text ends asking what a lamp, mark or display is (WHAT_IS_IT_RE), tells of no red lamp lit
    (RED_LAMP_LIT_RE), and asks neither what to do now nor whether to keep driving."""
    return (
        WHAT_IS_IT_RE.search(text.strip()) is not None
        and RED_LAMP_LIT_RE.search(text) is None
        and KEEP_DRIVING_RE.search(text) is None
        and WHAT_TO_DO_RE.search(text) is None
    )


def asks_whether_it_can_happen(text: str) -> bool:
    """The text asks whether what it names can happen at all (CAN_IT_HAPPEN_RE), not what to do now."""
    return CAN_IT_HAPPEN_RE.search(normalize_symptom(text)) is not None and WHAT_TO_DO_RE.search(text) is None


# Car words an owner may type in hiragana (a child, an old phone, a hurry: 「ぶれーきふんでもとまらない」): the
# embedder knows them in katakana only, and a text all in kana is read as such. Only a text without a kanji is
# rewritten: in ordinary writing 「いくらくらい」 or 「溜まっとる」 hold no loanword.
LOANWORDS = (  # one string reads better than a list of 46  # noqa: SIM905
    "ブレーキ サイドブレーキ ハンドル ステアリング パワステ タイヤ ホイール パンク エンジン "
    "エンスト エンジンルーム アクセル ペダル ボンネット マフラー ガソリン オイル クーラント "
    "ラジエーター オーバーヒート ランプ メーター バッテリー エアコン ヒーター ボルト ワイパー "
    "ライト ヘッドライト ウインカー ハザード ブザー シフト レバー クラッチ シート ベルト "
    "シートベルト エアバッグ ミラー トランク ダッシュボード アイドリング スピード ハイブリッド "
    "パーキング"
).split()
_TO_HIRAGANA = str.maketrans({chr(c): chr(c - 0x60) for c in range(0x30A1, 0x30F7)})
_HIRAGANA_LOANWORDS = {word.translate(_TO_HIRAGANA): word for word in LOANWORDS}
_LOANWORD_RE = re.compile("|".join(sorted(map(re.escape, _HIRAGANA_LOANWORDS), key=len, reverse=True)))
_KANJI_RE = re.compile(r"[\u3400-\u9fff]")
_KATAKANA_LETTER_RE = re.compile(r"[\u30a1-\u30f6]")
_HIRAGANA_LETTER_RE = re.compile(r"[\u3041-\u3096]")
# The fewest katakana letters a text typed in katakana has (a word or two in katakana, 「ナビ」「ETC」, is no such text).
KATAKANA_TYPED = 10
# A question (「…ってどういう意味？」「…大丈夫ですか」): the calm neighbours of a text that is none must be none.
QUESTION_RE = re.compile(r"[？?]|(ですか|ますか|でしょうか|かな|っけ|んの|なの)[。\s]*$")


def is_question(text: str) -> bool:
    return QUESTION_RE.search(text) is not None


# A sentence and the marks that end it (the calm neighbourhood is asked of each sentence the rules find urgent).
SENTENCE_RE = re.compile(r"[^。！？!?\n]+[。！？!?\n]*")


def sentences_of(text: str) -> list[str]:
    """The sentences of `text`, each with the marks that end it (SENTENCE_RE)."""
    return [s for s in SENTENCE_RE.findall(text) if s.strip()]


# A sentence that goes on from an exclamation or a question before it by quoting it (「焦げ臭い！と思ったら…」「煙が！って
# 騒いでたけど…」「漏れてる？とおもったら…」): what was quoted was a thought or a cry, not a sentence of its own.
_QUOTING_RE = re.compile(r"^\s*(?:って|っと|と(?:思|おも|焦|あせ|感じ|叫|言|騒|慌|あわ|びっくり|ビビ))")


def told_sentences(text: str) -> list[str]:
    """The sentences of `text` (sentences_of), a cry or a thought quoted by the sentence after it (_QUOTING_RE) told
    together with it: 「車の中が焦げ臭い！と思ったら、後ろの席の焼き芋の袋でした」 is one sentence, not a report and an
    answer."""
    told: list[str] = []
    for sentence in sentences_of(text):
        if told and told[-1].rstrip()[-1:] in "！？!?" and _QUOTING_RE.match(sentence):
            told[-1] += sentence
        else:
            told.append(sentence)
    return told


def typed_in_katakana(text: str) -> bool:
    """A text written in katakana as a telegram or an old phone writes it (「ハンドルガ キュウニ オモクナッテ マガラナイ」):
    no kanji, at least KATAKANA_TYPED letters of katakana and more than twice as many as of hiragana (a text in hiragana
    with its car words in katakana is none)."""
    katakana = len(_KATAKANA_LETTER_RE.findall(text))
    return (
        _KANJI_RE.search(text) is None
        and katakana >= KATAKANA_TYPED
        and katakana > 2 * len(_HIRAGANA_LETTER_RE.findall(text))
    )


def with_katakana_loanwords(text: str) -> str:
    """A text without a kanji with its car words in katakana (「ぶれーきふんでも」 -> 「ブレーキふんでも」), as it is
    embedded; a text typed in katakana is read in hiragana first (「ハンドルガ キュウニ」 -> 「ハンドルが きゅうに」: the
    embedder reads Japanese written in katakana as it reads foreign words); any other text as it is."""
    if _KANJI_RE.search(text):
        return text
    if typed_in_katakana(text):
        text = text.translate(_TO_HIRAGANA)
    return _LOANWORD_RE.sub(lambda m: _HIRAGANA_LOANWORDS[m.group()], text)


# An owner asking what to do now (「…って言われて、今どうしたらいい？」「助けて」) has the danger now, whatever the
# neighbours tell: neither the story nor the calm neighbourhood caps the rules. (Not any 「どうすればいい」: 「会員の更新って
# どうすればいいですか」 is a question about paperwork.)
PLEA_RE = re.compile(r"(今|いま)[、,]?(すぐ)?どう(したら|すれば|すりゃ)|助けて|たすけて")
