"""Search by meaning on the new default embedder: switching embedders re-indexes (with progress) instead of
mixing vectors; the manual RAG finds an owner's everyday words and its 0.3 threshold drops what is unrelated;
the urgency fast path rates critical phrasings the rules were not written for as critical."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from core.flows.diagnosis.constants import SAMPLES_DIR
from core.flows.diagnosis.manual_vectors import chunk_vectors, precomputed, precomputed_file, text_digest
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.urgency import FRAME_NOTE, keyword_urgency_check
from core.flows.diagnosis.urgency_fast_path import (
    cap_note,
    fast_urgency_check,
    judged_as_written,
    reported_beside_the_story,
    story_like,
)
from core.flows.diagnosis.urgency_frames import (
    from_each_danger,
    in_harmless_frame,
    reports_a_bare_danger,
    told_after_a_step,
    told_after_the_frames,
    told_before_the_frames,
)
from core.flows.diagnosis.urgency_grammar import (
    REQUEST_RE,
    asks_what_it_is,
    asks_whether_it_can_happen,
    doubts_a_fault,
    is_a_request,
    says_it_can_wait,
    sentences_of,
    told_sentences,
    typed_in_katakana,
    with_katakana_loanwords,
)
from core.flows.diagnosis.urgency_meaning import (
    EXEMPLARS_FILE,
    SHIPPED_VECTORS,
    UrgencyJudge,
)
from core.flows.diagnosis.urgency_reasons import (
    CALM_NOTE,
    DENIAL_NOTE,
    EXAMPLE_NOTE,
    MEANING_REASON,
    PROBE_NOTE,
    QUESTION_NOTE,
    STORY_NOTE,
    WAIT_NOTE,
    joined_reasons,
    quote,
    without_cap_note,
)
from core.flows.diagnosis.urgency_rules import CRITICAL_RULES, normalize_symptom, says_it_works
from core.flows.memory.chat import run_turn
from core.flows.memory.constants import EXTRACTION_SEPARATE
from core.flows.memory.reconcile import reconcile_memory_index
from core.flows.memory.retrieval import retrieve
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.people import LOCAL_PERSON
from core.samples.diagnosis.build_manual_vectors import save, vectors_of
from core.search.embedders import BundledE5Embedder, BundledEmbedder, NgramEmbedder
from core.search.precomputed import SAME_MODEL
from core.search.vectors import open_chroma
from core.store import open_store

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

    from core.store.memory.repository import MemoryRepository

NOW = 1_795_000_000


def test_switching_the_embedder_reindexes_every_unit_into_its_own_collection(tmp_path: Path) -> None:
    engine, chroma = open_store(tmp_path), open_chroma(tmp_path)
    repo = memory_repository(engine, LOCAL_PERSON, lambda: NOW)
    before = memory_collection(chroma, LOCAL_PERSON, NgramEmbedder())
    for text in ("新宿でラーメンを食べた", "週末は高尾山に登った"):
        run_turn(repo, before, demo_client(), [], text, NOW, extraction=EXTRACTION_SEPARATE)
    units = before.count()
    after = memory_collection(chroma, LOCAL_PERSON, BundledEmbedder())
    assert after.count() == 0 and after.name != before.name
    seen: list[tuple[int, int]] = []
    report = reconcile_memory_index(
        repo, after, batch=2, progress=lambda done, total: seen.append((done, total))
    )
    assert after.count() == units == len(report.indexed) and report.removed == []
    assert seen[-1] == (units, units) and len(seen) == (units + 1) // 2
    assert (after.metadata or {})["dim"] == 684 and (before.metadata or {})["dim"] == 512
    assert before.count() == units  # the old index is left as it was, never mixed into the new one


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> RAGService:
    service = RAGService(open_chroma(tmp_path_factory.mktemp("rag")))
    service.index_manuals()
    return service


@pytest.mark.parametrize(
    ("query", "section"),
    [("給油のフタがあかない", "給油口が開かない"), ("ナビの画面が見にくいほど暗い", "ディスプレイが暗い")],
)
def test_an_owners_everyday_words_find_the_manual_section(rag: RAGService, query: str, section: str) -> None:
    found = rag.search(query, "minato-soleil-2022")
    assert section in [s["section"] for s in found]
    assert all(s["score"] > 0.3 and s["vehicle_id"] == "minato-soleil-2022" for s in found)


def test_the_threshold_drops_an_unrelated_query(rag: RAGService) -> None:
    assert rag.search("駅前のパン屋さんのおすすめを教えて", "minato-soleil-2022") == []


def test_the_index_holds_every_chunk_whole_and_by_sentence(rag: RAGService) -> None:
    assert rag.is_indexed() and rag.chunk_count() == len(rag._all_chunks())
    ids = rag.collection.get(include=[])["ids"]
    assert "minato-soleil-2022-006" in ids and "minato-soleil-2022-006~s1" in ids
    assert rag.reconcile() == (0, 0)


@pytest.fixture(scope="module")
def judge() -> UrgencyJudge:
    return UrgencyJudge(BundledEmbedder())


@pytest.mark.parametrize("text", ["下り坂で止まれなくなった", "ペダルを戻してもスピードが上がり続ける"])
def test_the_issues_critical_phrasings_are_critical_by_meaning_alone(judge: UrgencyJudge, text: str) -> None:
    meaning, near = judge.judge(text)
    assert (meaning.level, meaning.can_drive, meaning.visit_urgency) == ("critical", False, "immediate")
    assert near[0].similarity >= near[-1].similarity
    assert any(r.startswith("意味の近い症状例「") and r.endswith("（緊急度: 緊急）") for r in meaning.reasons)
    result = fast_urgency_check(text, judge)
    assert (result.level, result.can_drive, result.visit_urgency) == ("critical", False, "immediate")


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("ペダルを戻してもスピードが上がり続ける", "unintended_acceleration"),
        ("タイヤのボルトが緩んでいる", "wheel_loose"),
    ],
)
def test_the_rules_now_name_them_too(judge: UrgencyJudge, text: str, rule: str) -> None:
    reasons = {r.name: r.reason for r in CRITICAL_RULES}
    result = keyword_urgency_check(text)
    assert (result.level, result.reasons) == ("critical", [reasons[rule]])
    assert fast_urgency_check(text, judge).level == "critical"


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("ナビの音声が小さい", "low"),
        ("次のオイル交換はいつ？", "low"),
        ("クルーズコントロールの使い方を教えて", "low"),
    ],
)
def test_not_urgent_phrasings_are_never_raised_to_high(judge: UrgencyJudge, text: str, level: str) -> None:
    # ナビの音声 lies nearest to 「ナビの案内の音声が出ない」 (low, convenience equipment), never high or critical
    assert fast_urgency_check(text, judge).level == level


def test_itsumo_at_the_end_is_no_question_of_when() -> None:
    """「…いつも通り」 at the end tells how the car runs; 「いつ」 asks when (a request: the judgement stays low)."""
    assert REQUEST_RE.search("次のオイル交換はいつ？")
    assert REQUEST_RE.search("エンジンのオレンジのランプが点きっぱなし。走りはいつも通り") is None


def test_without_a_judge_the_fast_path_is_the_rules_alone() -> None:
    text = "下り坂で止まれなくなった"
    assert fast_urgency_check(text, None) == keyword_urgency_check(text)


@pytest.mark.parametrize("embedder", [BundledEmbedder(), BundledE5Embedder()], ids=["bundled", "e5"])
def test_the_shipped_manual_vectors_are_the_embedders_and_cover_every_text(
    rag: RAGService, embedder: BundledEmbedder | BundledE5Embedder
) -> None:
    shipped = precomputed(SAMPLES_DIR, embedder.key)
    texts = sorted({text for c in rag._all_chunks() for _, text in chunk_vectors(c)})
    assert {text_digest(t) for t in texts} <= set(shipped)  # else run build_manual_vectors.py
    sample = texts[:: max(1, len(texts) // 8)]
    assert same_model(np.stack([shipped[text_digest(t)] for t in sample]), embedder.embed_documents(sample))
    assert precomputed(SAMPLES_DIR, "ngram512") == {}


def same_model(shipped: np.ndarray, embedded: np.ndarray) -> bool:
    """Each shipped vector is the embedder's own, on this machine or another: the engine's vectors differ by up to
    ~3e-3 per component across CPUs (cosine 0.9999), so they are compared by cosine (SAME_MODEL), not to 1e-5."""
    return bool((np.sum(shipped * embedded, axis=1) >= SAME_MODEL).all())


@pytest.mark.parametrize("embedder", [BundledEmbedder(), BundledE5Embedder()], ids=["bundled", "e5"])
def test_the_shipped_example_vectors_are_the_embedders_and_cover_every_example(
    embedder: BundledEmbedder | BundledE5Embedder,
) -> None:
    """The urgency examples' query vectors ship beside them (the first diagnosis turn loads them instead of embedding
    ~2,400 examples); a new example without one is embedded at run time, so this test asks for the rebuild."""
    shipped = precomputed_file(EXEMPLARS_FILE.with_name(SHIPPED_VECTORS.format(key=embedder.key)))
    texts = [with_katakana_loanwords(t) for t in UrgencyJudge(embedder).texts]
    assert {text_digest(t) for t in texts} <= set(
        shipped
    )  # else run core/samples/diagnosis/build_manual_vectors.py
    sample = texts[:: max(1, len(texts) // 8)]
    assert same_model(np.stack([shipped[text_digest(t)] for t in sample]), embedder.embed_queries(sample))
    # and not the passage side's vectors: e5's query and passage prefixes are told apart at this tolerance
    assert not same_model(
        np.stack([shipped[text_digest(t)] for t in sample]), embedder.embed_documents(sample)
    )


def test_an_example_without_a_shipped_vector_is_embedded_at_run_time(tmp_path: Path) -> None:
    path = tmp_path / "examples.json"
    path.write_text(json.dumps({"description": "", "levels": {"critical": ["新しい例文"]}}), encoding="utf-8")
    embedder = BundledEmbedder()
    judge = UrgencyJudge(embedder, path)
    assert np.allclose(judge._matrix(), embedder.embed_queries(["新しい例文"]), atol=1e-6)


def test_a_text_without_kanji_has_its_car_words_in_katakana() -> None:
    assert with_katakana_loanwords("ぶれーきふんでもとまらない") == "ブレーキふんでもとまらない"
    assert with_katakana_loanwords("まふらーからほのおがでた") == "マフラーからほのおがでた"
    assert (
        with_katakana_loanwords("さいどぶれーきがきかない") == "サイドブレーキがきかない"
    )  # the longest word
    assert (
        with_katakana_loanwords("タイヤ交換っていくらくらい") == "タイヤ交換っていくらくらい"
    )  # a kanji: as is
    assert with_katakana_loanwords("ぶれーき踏んでも") == "ぶれーき踏んでも"


def test_a_text_typed_in_katakana_is_embedded_in_hiragana_with_its_car_words_in_katakana() -> None:
    """A telegram in katakana (v61: 「ハンドルガ キュウニ オモクナッテ マガラナイ」) is read as the same text in hiragana
    would be; a text in hiragana with car words in katakana, a few katakana words or a text with a kanji is not."""
    telegram = "ハンドルガ キュウニ オモクナッテ マガラナイ。イマ ミチノハシニ トメテル"
    assert typed_in_katakana(telegram)
    assert (
        with_katakana_loanwords(telegram)
        == "ハンドルが きゅうに おもくなって まがらない。いま みちのはしに とめてる"
    )
    assert (
        with_katakana_loanwords("ブレーキガ キカナイ。サイドブレーキデ トメタ")
        == "ブレーキが きかない。サイドブレーキで とめた"
    )
    assert not typed_in_katakana("ブレーキが きかない")
    assert not typed_in_katakana("ナビ ETC ドラレコ")  # a few katakana words
    assert not typed_in_katakana("ハンドルガ キュウニ 重クナッテ マガラナイ")  # a kanji
    assert with_katakana_loanwords("ハンドルガ キュウニ 重クナッテ") == "ハンドルガ キュウニ 重クナッテ"


@pytest.mark.parametrize(
    "text",
    [
        "まふらーからほのおがでた",
        "たいやのぼるとがゆるんでいる",
        "いまこうそく。きゅうにはんどるががちがちにおもくなってこわい",
        "あくせるぺだるがもどってこなくて、あしをはなしてもかそくしつづけた",
    ],
)
def test_a_danger_written_all_in_hiragana_is_critical_by_meaning(judge: UrgencyJudge, text: str) -> None:
    """Critical phrasings of the sets as a child or a phone in a hurry writes them: the rules need their kanji, the
    embedder its katakana car words (each of these was low before the car words were restored)."""
    assert keyword_urgency_check(text).level != "critical"
    assert fast_urgency_check(text, judge).level == "critical"


@pytest.mark.parametrize(
    "text",
    [
        # v21: asks whether a sound is normal (a question)
        "下り坂でアクセル離すとエンジンがウォーンってうなる、これエンジンブレーキ？",
        # v21: an old accident declared, no accident now (a frame)
        "昔エアバッグが開くくらいの事故をしたことがあるんですが、次の車を買うときに申告っているんですか",
        # v22: a colleague as the brake (ブレーキ役)
        "うちの部長が新企画のブレーキ役になってて全然進まん…愚痴すみません、車は絶好調です",
        # v23: a click at start-up found normal with relief (「正常…安心した」)
        "エンジンかける時に一回だけカチッて音がするんだけど、取説にも書いてある正常な音みたいで安心した",
        # v26: a swollen power bank thrown away, the car fine (「車は何ともないです」); a leak in the garage's roof
        "車に置きっぱなしだったモバイルバッテリーが膨らんでたので捨てました。車は何ともないです",
        "漏れてるのはうちのガレージの屋根です笑 直るまで車を預かってもらうことってできます?",
        # v27: a road-safety slogan learnt at school (「車は急に止まらない」)
        "娘が学校の交通安全教室で「車は急に止まらない」って習ってきて、私が運転するたびに後ろから注意してきます笑",
        # v28: a dream written in kana (kana dangers lie near it)
        "きのう くるまが もえる ゆめを みた。えんぎ わるいから てんけん おねがいしようかな",
        # v29: a memory of skiing (止まらずにネットに突っ込んだ思い出); how hill-start assist works (a named function)
        "スキー初心者の頃、ブレーキのかけ方がわからなくて止まらずにネットに突っ込んだ思い出",
        "坂道で一瞬止まってくれる機能、あれってブレーキが勝手に効いてるんですか？",
        # v30: a stock on fire, a remark about a person quoted (its go-kart's heavy steering is a danger in a frame since
        # v49's rule for steering too heavy to turn: see test_the_same_words_about_this_car_now_keep_their_level)
        "持ってる株が火を噴いて爆上がり中！この勢いで新車買っちゃおうかな",
        "上司に「お前の企画はエンジン全開なのにハンドルがない」って言われて凹んでる",
        # v31: a brakeless runaway said of a shot, a prank programme, a friend's former car, a habit that does not
        # stop (in kana), how a function works
        "あいつのスマッシュはブレーキのきかん暴走特急ばい",
        "タイヤが外れるドッキリ番組見て爆笑した",
        "友達の前の車、エンジンから火を噴いたことあるらしい",
        "あのこ かいもの はじまると とまらんけん こまる",
        "ハンドルロックってどういう仕組み？鍵抜いたら回らなくなるやつ",
        # v32: an old story once heard, a stove at home and the car said to be fine, a dog that does not stop, a grill's
        # fire and the car said to be no part of it, a story of the cars of old
        "昔話で、祖父のトラックが坂道で勝手に下がったって聞いたことある",
        "今朝寒くてストーブ燃えすぎておっかねがった、車は大丈夫だ",
        "犬が散歩で止まらなくて引きずられた、犬にもブレーキ欲しい",
        "焼肉で網から火が上がって大騒ぎしたわ、車は関係ないけど笑",
        "ハンドル重いって友達に言われたけど、それパワステない昔の車の話らしい",
        # v34: how an assist works (how long it holds the car on a hill), how somebody drives (brakes late; a brake
        # for the passenger's seat)
        "ヒルスタートアシストって、坂道で車が下がらないように何秒くらい止めててくれるものなんですか",
        "彼氏の運転、ブレーキ踏むのが遅くていつもヒヤヒヤします…助手席にもブレーキ欲しいって言ったら笑われました",
        # v35: talk that does not stop; a question how a function works ending in 「知りたいです。」 (a request)
        "うちのおかん、助手席でずっとしゃべってて止まらへんねん笑 それはええとして、後ろの席にもUSBの充電口ってついてます？",
        "自動ブレーキって、歩行者が急に飛び出してきても本当に止まるんですか？仕組みを知りたいです。",
        # v36: a pet's mess on the seat (near a flooded footwell by meaning)
        "うちの犬が後部座席でよだれを漏らしまくって、シートがびしょびしょです…。防水のシートカバーって純正でありますか？",
        # v37: a train stopped by an accident, a cat hiding under the car (猫バンバン)
        "電車が事故で止まってしまい、今日は久しぶりに車で通勤します。しばらく乗ってなかった車で気をつけることはありますか？",
        "猫が車の下に潜り込んで30分出てこなかったです（もう出てきました）。乗る前にボンネットを叩く猫バンバンって効果ありますか？",
        # v38: money leaking away
        "ガソリン代が高くてお金が漏れていく一方です。燃費を良くする運転のコツありますか",
        # v50: a dog's sick, a grandchild's 「ばくはつしそう」 after an inspection found nothing (in kana), a snake that was a hose
        "犬が後ろの座席でゲーゲー吐いちゃって、拭いたけど臭いが全然取れません。車内クリーニングってやってますか",
        "まごが「じいちゃんのくるま ばくはつしそう」って いうんです。えんじんの おとが おおきいだけで、このまえの てんけんでは"
        " なんにも もんだい ないって いわれました。あんしん しました。",
        "おばあがさ、車の下にハブが入っていったって大騒ぎしてたけど、結局落ちてたホースだったさー。"
        "ついでにエンジンルームの掃除ってお願いできるね？",
    ],
)
def test_what_only_the_judgement_by_meaning_called_critical_is_capped_by_its_frame(
    judge: UrgencyJudge, text: str
) -> None:
    """The rules find no danger in these; by meaning each was critical after its set's run, until the question or
    frame it is written in capped the judgement."""
    assert keyword_urgency_check(text).level == "low"
    assert fast_urgency_check(text, judge).level in ("low", "medium")


@pytest.mark.parametrize(
    "text",
    [
        "モバイルバッテリーが膨らんでた。車のバッテリーのあたりから煙が出てる",
        "漏れてるのはガソリンです、車の下に水たまりができてる",
        "ガレージの屋根から雨漏りしてたら、車の下にガソリンが漏れてた",
        "ストーブ燃えすぎておっかねがった、車は大丈夫だ。でもブレーキが効かない",
        "犬が止まらなくて引きずられたけど、車も止まらない",
        "車は大丈夫かな、ブレーキが効かない",
        "車は関係ないけど、ボンネットから煙が出てる",
        "ブレーキが効かないってどういう意味？今踏んでもスカスカ",
        "エンストってどういう状態？今まさに走行中に止まった",
        "ヒルスタートアシストってあるけど、今ブレーキ踏んでも止まらない",
        "彼氏の運転で走ってたら、ブレーキ踏んでも止まらない",
        "しゃべってたら車が止まらへん",
        "犬を乗せてたら、ボンネットから煙が出てきた",
        "教習所に向かう途中でエンストして動かない",
        "猫をよけたらハンドルが効かなくなった",
        "お金のことを考えてたら、ガソリンが漏れてる",
        # found beside v50's lessons: a frame capped the judgement by meaning wherever the danger was told
        "異常なしって言われたのに、下り坂で止まれなくなった",
        "点検でなんにも問題ないって言われた。さっきから下り坂で止まれない",
        "結局ホースだった。今朝から下り坂で止まれなくなった",
    ],
)
def test_the_same_words_with_the_danger_here_stay_critical(judge: UrgencyJudge, text: str) -> None:
    assert fast_urgency_check(text, judge).level == "critical"


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ("異常なしって言われたのに、下り坂で止まれなくなった", "下り坂で止まれなくなった"),
        ("結局ホースだった。今朝から下り坂で止まれなくなった", "今朝から下り坂で止まれなくなった"),
        ("点検で異常なしでした。ありがとうございます", "ありがとうございます"),
        ("点検で異常なしでした", ""),
        ("下り坂で止まれなくなった", ""),
    ],
)
def test_what_a_text_tells_after_its_frames_reach(text: str, rest: str) -> None:
    """The judgement by meaning, which places no danger, asks what no frame covers (told_after_the_frames): the text
    after the last frame and the step of the story, turn to today or sentence end that follows it."""
    assert told_after_the_frames(text) == rest


FUMES_THEN_FRAME = (
    "家族で乗ると、窓を閉めて暖房をつけているとみんな眠くなって頭が痛いと言います。"
    "以前マフラーに穴があいていると言われたことがあって"
)


@pytest.mark.parametrize(
    ("text", "before"),
    [
        (FUMES_THEN_FRAME, "家族で乗ると、窓を閉めて暖房をつけているとみんな眠くなって頭が痛いと言います。"),
        (
            "以前マフラーに穴があいていると言われたことがあって。窓を閉めると頭が痛い",
            "",
        ),  # the frame comes first
        ("エンジンが止まった。修理してもらってからは問題ありません", ""),  # a later frame that settles it
        ("頭が痛いです。ニュースで見たのと同じです", "頭が痛いです。"),
        ("下り坂で止まれなくなった", ""),
    ],
)
def test_what_a_text_tells_before_its_first_frame(text: str, before: str) -> None:
    """A frame in a later sentence covers a danger for the rules only when it settles it; the judgement by meaning asks
    the same of what was told before the first frame's sentence (told_before_the_frames)."""
    assert told_before_the_frames(text) == before


def test_a_frame_in_a_later_sentence_does_not_cap_what_came_before(judge: UrgencyJudge) -> None:
    """v66's missed critical text: fumes in the cabin (critical by meaning, no rule) told before 「以前…と言われたことが
    あって」, whose frame capped the whole judgement at medium. What was told before the frame's sentence reads critical
    on its own, so the frame does not cap it."""
    assert keyword_urgency_check(FUMES_THEN_FRAME).level == "low"
    assert in_harmless_frame(FUMES_THEN_FRAME)
    assert fast_urgency_check(FUMES_THEN_FRAME, judge).level == "critical"


USB_CAN_WAIT = "車内のUSBポートが片方反応しないです。急ぎではないので次の点検の時で大丈夫です"
BATTERY_LIGHT = "社用車3号車、本日朝よりバッテリー警告灯が点灯したまま走行しているとドライバーより報告"


@pytest.mark.parametrize(
    ("text", "example_level", "level"),
    [
        (USB_CAN_WAIT, "high", "medium"),
        ("車内のUSBポートが片方反応しないです", "high", "high"),
        (USB_CAN_WAIT, "critical", "critical"),
    ],
)
def test_an_owner_who_says_it_can_wait_caps_a_high_likeness_and_never_a_critical_one(
    tmp_path: Path, text: str, example_level: str, level: str
) -> None:
    """v49: a USB port, 「急ぎではないので次の点検の時で大丈夫です」, lay near a battery warning light (high by meaning
    alone, 0.89). The owner's word caps such a likeness at medium, with a note the banner leaves out once another
    judgement raises the session; a critical likeness stays."""
    judge = _placed_judge(tmp_path, {example_level: [BATTERY_LIGHT]}, {BATTERY_LIGHT: 0.89}, text)
    result = fast_urgency_check(text, judge)
    assert keyword_urgency_check(text).level == "low"
    assert result.level == level
    if level == "medium":
        assert result.reasons == [MEANING_REASON + quote(BATTERY_LIGHT) + WAIT_NOTE]
        assert without_cap_note(result.reasons[0]) == MEANING_REASON + quote(BATTERY_LIGHT)


def test_an_owner_who_says_it_can_wait_does_not_lower_a_danger(judge: UrgencyJudge) -> None:
    """What the rules find, or a critical likeness, stays whatever the owner says of the hurry."""
    assert fast_urgency_check("急ぎではないけど、ブレーキが効かない", judge).level == "critical"
    assert fast_urgency_check("急ぎじゃないんですけど、下り坂で止まれなくなった", judge).level == "critical"
    assert (
        fast_urgency_check("次の点検の時で大丈夫です。水温計の針がHのほうに上がってきてる", judge).level
        == "critical"
    )
    assert [
        says_it_can_wait(t)
        for t in (
            USB_CAN_WAIT,
            "急ぎじゃないです",
            "急ぎません",
            "急いでないのにスピードが上がる",
            "急ぎなんですが",
        )
    ] == [True, True, True, False, False]


def test_a_question_about_what_a_function_does_is_a_frame_and_a_report_of_it_failing_is_none() -> None:
    """v29: 「…機能、あれって…ですか？」 asks how hill-start assist works; the same function failing is a report."""
    assert in_harmless_frame("坂道で一瞬止まってくれる機能、あれってブレーキが勝手に効いてるんですか？")
    assert not in_harmless_frame("坂道で一瞬止まってくれる機能、あれが効かなくて車が下がってくる")


def test_an_owner_who_drives_it_every_day_asks_whether_to_keep_driving(judge: UrgencyJudge) -> None:
    """v21: a crash's damage and 「毎日乗っていますが大丈夫でしょうか」 is no doubt whether it is normal: no cap (it
    was medium)."""
    text = (
        "事故のあとエアバッグの警告灯が消えず、シートベルトも引き出せない。毎日乗っていますが大丈夫でしょうか"
    )
    assert doubts_a_fault(text) is False
    assert judge.judge(text)[0].level == "critical"


def test_a_question_whether_it_is_normal_goes_no_higher_than_medium_by_meaning(judge: UrgencyJudge) -> None:
    # (the first set's 「ブレーキを踏まないとシフトレバーが動かないのは正常？」 is an example itself now: low)
    meaning, near = judge.judge("ブレーキペダルを踏まないとエンジンがかからないのは正常？")
    assert meaning.level == "medium" and meaning.can_drive
    assert meaning.reasons == [
        f"意味の近い症状例{quote(near[0].text)}（正常かどうか・起こりうるか・何の表示かを尋ねる文のため、緊急度は中まで）"
    ]


def test_the_rules_still_rate_a_failure_asked_as_a_question() -> None:
    result = fast_urgency_check("ブレーキを踏んでも効かないけど大丈夫？", None)
    assert (result.level, result.can_drive) == ("critical", False)


def test_a_danger_in_somebody_elses_car_goes_no_higher_than_medium_by_meaning(judge: UrgencyJudge) -> None:
    meaning, near = judge.judge("知り合いの車がブレーキが効かなくなって事故ったらしい")
    assert near[0].level == "critical"  # the meaning is a brake failure...
    assert (meaning.level, meaning.can_drive) == ("medium", True)  # ...but not this person's
    assert meaning.reasons == [f"意味の近い症状例{quote(near[0].text)}{FRAME_NOTE}"]


@pytest.mark.parametrize(
    "text",
    [
        "凍った道でブレーキ踏んだらペダルがガガガって震えた",  # ABS on ice: normal, no vibration fault
        "雪道でブレーキを踏むとガガガと振動する",
    ],
)
def test_abs_pulsing_on_ice_is_no_vibration_fault(text: str) -> None:
    assert keyword_urgency_check(text).level == "low"
    assert (
        keyword_urgency_check("高速道路でハンドルがブルブル振動する").level == "high"
    )  # a vibration still is


def test_a_brake_that_fails_on_snow_is_still_critical() -> None:
    result = keyword_urgency_check("雪道でブレーキを踏んだら効かない")
    assert (result.level, result.can_drive) == ("critical", False)


@pytest.mark.parametrize(
    "text",
    [
        "焦げくさっ！と思ったら隣の焼き芋屋さんの煙だった。車は異常なし",  # a scare explained away
        "友達が高速でタイヤが外れたって聞いて心配になった",  # somebody else's story
        "ハンドルが効かなくなる夢を見て汗だくで起きた",  # a dream
        "小説で車が炎上する場面を書いてる",  # fiction
    ],
)
def test_a_scare_explained_away_a_story_or_a_dream_goes_no_higher_than_medium(
    judge: UrgencyJudge, text: str
) -> None:
    assert keyword_urgency_check(text).level in ("low", "medium")
    assert fast_urgency_check(text, judge).level in ("low", "medium")


def test_a_plea_ending_in_a_request_is_judged_by_meaning(judge: UrgencyJudge) -> None:
    """「…教えて」 at the end makes a request (the judgement by meaning stays low) unless the owner asks what to do or
    drives now: v38's 「ハンドルが急に固まって回らんのじゃ、今運転しよるけえ、どうしたらええんか教えて」 was low."""
    assert judge.judge("パンク修理キットの使い方を教えて")[0].level == "low"
    meaning, _ = judge.judge("ハンドルがガチッと固まって動かん、今運転しよるけえ、どうしたらええんか教えて")
    assert meaning.level == "critical"
    # a seized wheel said with its negation is a failure, not a denial (the rule's match holds 「回らん」)
    assert not says_it_works("ハンドルが急に固まって回らない")


@pytest.mark.parametrize(
    ("text", "by_rule"),
    [
        # v47's two missed critical phrasings were low by rule and low by meaning: each ends in a request
        (
            "ワックスのことも相談したかったんですが…今、信号待ちで止まってたら、アクセル踏んでないのにエンジンの回転が"
            "どんどん上がって、車が勝手に前に出ようとします。あとワックスは何がおすすめですか",
            "low",
        ),
        # since v55 a parked car that rolls away is critical by rule too (rolls_away_parked)
        (
            "営業時間って何時までですか？ってか今、Pに入れてたのに車が勝手に坂をじわじわ動き出した!! "
            "あとオイル交換の値段も知りたいです",
            "critical",
        ),
    ],
)
def test_a_report_now_beside_a_request_is_judged_on_its_own(
    judge: UrgencyJudge, text: str, by_rule: str
) -> None:
    """A request (「…おすすめですか」「…知りたいです」) keeps the judgement low, except for a sentence beside it told as
    happening now (tells_of_now), judged on its own: the engine racing by itself is critical by meaning only."""
    assert is_a_request(text)
    assert keyword_urgency_check(text).level == by_rule
    assert judge.judge(text)[0].level == "critical"
    assert fast_urgency_check(text, judge).level == "critical"


@pytest.mark.parametrize(
    "text",
    [
        "先月エンジン警告灯が点いてセンサーを替えてもらった。それからランプは消えたまま。次のオイル交換はいつ頃がいい？",
        "今、洗車から帰ってきました。次のオイル交換はいつ頃がいい？",  # a sentence of now that tells no danger
        "アクセル踏んでないのに車が勝手に前に出る車ってあるんですか？対策を知りたいです",  # nothing told of now
    ],
)
def test_a_request_without_a_report_now_stays_low_by_meaning(judge: UrgencyJudge, text: str) -> None:
    assert is_a_request(text)
    assert judge.judge(text)[0].level == "low"


def test_a_frame_followed_by_the_writers_own_car_now_is_no_frame(judge: UrgencyJudge) -> None:
    """The news frames the flood it shows; 「…、いま私の車が…」 after it turns to the writer's car (v37's one missed
    critical phrasing was capped at medium by the frame)."""
    assert in_harmless_frame("ニュースで冠水した道路の映像見てた")
    text = "ニュースで冠水した道路の映像見てたけど他人事じゃなかった、いま私の車が水の中で床から水がどんどん入ってきてる"
    assert not in_harmless_frame(text)
    assert fast_urgency_check(text, judge).level == "critical"
    assert in_harmless_frame(
        "いま私の車の話をすると、ニュースで冠水した道路の映像見てた"
    )  # the turn comes first


def test_saying_the_car_works_caps_the_judgement_by_meaning(judge: UrgencyJudge) -> None:
    """A text that names a danger to deny it (「煙も出てないし、ブレーキも普通に効く」) is near that danger by meaning
    only; the rules, which see the denial, decide."""
    text = "ぶつけられたけど煙は出てないし、ハンドルもちゃんと効く。ドアがへこんだだけ"
    meaning, near = judge.judge(text)
    assert meaning.level == "medium" and meaning.can_drive
    assert meaning.reasons == [
        f"意味の近い症状例{quote(near[0].text)}（症状がないこと・正常に動くことを述べる文のため、この判定では緊急度は中まで）"
    ]
    assert fast_urgency_check(text, judge).level == "medium"
    # a critical symptom the rules see is not capped by a denial beside it
    assert fast_urgency_check("ブレーキは普通に効くけど、ボンネットから煙が出てる", judge).level == "critical"
    # 「ちゃんと曲がって」 followed by a negation says the car does not work (v34's only missed critical phrasing)
    lost = "トンネルを抜けたあたりから急にハンドルを回しても車がちゃんと曲がってくれなくなりました。今なんとか低速で走ってます"
    assert not says_it_works(lost)
    assert fast_urgency_check(lost, judge).level == "critical"
    assert says_it_works("ハンドルもちゃんと曲がるし、ブレーキもしっかり効いてる")


def test_a_door_opened_while_driving_beside_a_setting_question_is_critical(judge: UrgencyJudge) -> None:
    """A question where a setting is made is a request, so the judgement by meaning is low; a door that opened while
    driving, told beside it, is critical by rule (`opens_while_driving`), and the fast path says so."""
    text = "後ろのスライドドアが走ってる最中に勝手に開いた！チャイルドロックはどこで設定するんですか？"
    assert is_a_request(text)
    assert judge.judge(text)[0].level == "low"
    result = fast_urgency_check(text, judge)
    assert (result.level, result.reasons[0]) == ("critical", "走行中にドア・ボンネットが開く")


def test_v52s_setting_question_function_question_and_brakes_working_again_in_kana() -> None:
    """v52: where a setting is made is a request; whether hill-start assist is a function, with a short word after, is
    a doubt of a fault; brakes that work again, typed in kana, say the car works. Each was critical by meaning."""
    assert is_a_request(
        "子どもが走行中にドア開けようとするので、チャイルドロックが外れないようにしたい。どこで設定するんですか？"
    )
    assert is_a_request("オートライトってどうやってオフにするんですか")
    assert is_a_request("タッチペンってなんぼすんの?")  # v53: 「なんぼ」 is 「いくら」
    assert not is_a_request("チャイルドロックの設定をしたのにドアが開いた")
    assert doubts_a_fault(
        "坂道で車が下がらないのは、故障じゃなくてそういう機能なんですよね？2秒くらいで動き出すけど"
    )
    assert not doubts_a_fault("坂道で車が下がらない機能が効かなくて、ずるずる下がっていく")
    assert says_it_works("きのう しゃけん おわりました。ぶれーきも ちゃんと きくようになって あんしんです")
    assert not says_it_works("ぶれーきが ちゃんと きかない")


def test_v55s_bonnet_hot_after_the_motorway_with_the_gauge_in_the_middle(judge: UrgencyJudge) -> None:
    """v55: a bonnet too hot to touch after a summer motorway drive, 「こんなもんですか？」, the temperature gauge 「ずっと
    真ん中のままでした」 was critical by meaning (boiling-over examples within the margin). A gauge in the middle says
    the car works, and 「こんなもんですか」 at the end asks whether it is normal; a gauge above the middle, or steam,
    does not."""
    text = (
        "夏に高速走ったあと、ボンネット触ったら火傷しそうなくらい熱かったんですけど、こんなもんですか？"
        "水温計はずっと真ん中のままでした"
    )
    assert says_it_works(text)
    # not a false alarm any more: medium while v55 was held out, low since it is among the examples (as low)
    assert fast_urgency_check(text, judge).level in ("low", "medium")
    assert doubts_a_fault("街乗りで燃費リッター12くらいなんですけど、こんなもんですか")
    assert not says_it_works("水温計は真ん中より上に上がってきて、ボンネットが熱い")
    assert not says_it_works("水温計はいつもの位置じゃない、ボンネットが熱い")
    assert not says_it_works("水温計はずっと真ん中だけど、ボンネットから湯気が出てる")
    assert (
        fast_urgency_check("水温計はずっと真ん中だけど、ボンネットから湯気が出てる", judge).level
        == "critical"
    )


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("事故のあとシートベルトを引っ張ってもロックがかからない", "restraint_failure"),
        ("赤いビックリマークのランプが点いて、ブレーキがいつもより深い", "red_warning_light"),
        ("助手席の足元が熱くて、プラスチックが溶けるようなにおいがする", "burning_smell"),
        # v17 taught (the rules missed these; the judgement by meaning had them)
        ("ブレーキがふわふわして、奥まで踏み込まないと止まらない", "brake_failure"),
        ("ブレーキが利かん、止まりきれん", "brake_failure"),
        ("アクセルから足を離してるのに、どんどん速くなる", "unintended_acceleration"),
        ("アクセルが戻らん", "unintended_acceleration"),
        ("排気ガスみたいな臭いがして、家族がみんな頭痛いって言ってる", "exhaust_in_cabin"),
        ("車の中に排ガスの臭いがこもってる", "exhaust_in_cabin"),
        ("車の下にぽたぽた垂れてて、嗅いだらガソリンでした", "fuel_leak"),
        ("冠水した道で、水がドアの下まで来てる", "deep_water"),
        ("メーターの温度の針が真っ赤なところまで来てる", "overheat"),
        ("走ってたら後ろのタイヤが今にも外れそうに揺れてる", "wheel_loose"),
    ],
)
def test_the_rules_name_these_critical_symptoms(text: str, rule: str) -> None:
    reasons = {r.name: r.reason for r in CRITICAL_RULES}
    result = keyword_urgency_check(text)
    assert result.level == "critical" and reasons[rule] in result.reasons


def test_asking_what_a_warning_light_means_is_no_sighting_of_it() -> None:
    assert keyword_urgency_check("赤い油さしみたいな警告灯ってどういう意味？").level == "low"
    assert keyword_urgency_check("赤い油さしみたいな警告灯が点いた").level == "critical"


def test_a_list_of_denials_denies_each_symptom() -> None:
    assert keyword_urgency_check("煙も変な臭いも警告灯も何もない。時計がずれてるだけ").level == "low"
    assert keyword_urgency_check("煙も臭いもない").level == "low"
    # a list that is not a denial still counts
    assert keyword_urgency_check("煙もすごいしハンドルも効かない").level == "critical"


def test_a_repair_done_and_stable_since_goes_no_higher_than_medium() -> None:
    assert (
        keyword_urgency_check("ラジエーターから湯気が出たけど、修理してからは水温ずっと安定してる").level
        == "medium"
    )
    # ...unless the text goes on to say it came back
    assert keyword_urgency_check("修理してからは安定してたけど今日また湯気が出た").level == "critical"
    assert (
        keyword_urgency_check("直してもらってから調子いいけど、今朝ボンネットから煙が出た").level
        == "critical"
    )


def test_the_engine_stopping_by_idle_stop_is_no_stall() -> None:
    assert (
        keyword_urgency_check("信号で止まるとエンジンが止まる、アイドリングストップってやつ？").level == "low"
    )
    assert keyword_urgency_check("アイドリングストップしないし、エンジンがかからない時がある").level == "high"


def test_a_doubt_is_no_scare_explained_away() -> None:
    """「気のせいだった」 explains a scare away; 「気のせい？」 only doubts it, and the danger still counts."""
    assert keyword_urgency_check("焦げ臭いと思ったけど気のせいだった").level in ("low", "medium")
    assert keyword_urgency_check("焦げ臭い気がする、気のせいかな").level == "critical"
    assert keyword_urgency_check("ボンネットから煙が出てる気がする…気のせい？").level == "critical"


@pytest.mark.parametrize(
    "text",
    [
        "旦那が「ブレーキ壊れた！」って騒いでたけど、サイドブレーキ戻し忘れてただけでした",  # explained away
        "高速で前の車のボンネットから煙が出てるのを見た。うちのは何ともない",  # another car
        "グランツーリスモでブレーキが効かなくなってクラッシュした笑",  # a game by name
        "息子が「ブレーキが効かない！」って言うから見たら自転車の話だった",
        "焼肉の後で車の中が煙くさい。どうやって消臭する？",
        "昔乗ってた軽でハンドルが急に重くなったことがある。今の車は大丈夫だけど予防できる？",
        "前にボンネットから煙が出て修理したけど、今は全然問題ないです",
        "水温の警告灯ってどんな色？今は点いてないけど覚えておきたい",
        "高速で隣の車から煙が出てた。自分の車は何ともなかったけど怖かった",
        "娘の自転車のブレーキが効かないって言うんだけど、車のついでに見てもらえる？",
        "足元でカラカラ音がするから焦ったけど、よく見たら小銭でした",
        "後ろからゴトゴト異音がすると思ったら空き缶が転がってた",
        "去年ラジエーターから湯気が出て修理した。それ以来まったく問題ない",
        "先週タイヤがパンクしたけど、今日はもう何ともない",
        "ハンドルが取られる気がして整備工場で見てもらったら、問題なしでした",
        "ブレーキがキーキー鳴ってたけど、パッドを交換してもらったら音も消えた",
        "車の下に水たまり、オイル漏れかと思ったらエアコンの排水だった",
        "焦げ臭いと思ったら、暖房をつけて最初のほこりが焼けるにおいだった",
        "車の中がガソリン臭いと思ったら、積んでた発電機の燃料でした。降ろしたら消えた",
        "キャンプで焚き火してたら煙が車に流れてきて、シートが煙臭い",
        "ボンネットから湯気が出たけど、ラジエーターを替えてからは問題なし",
        "先月ハンドルが効かなくなって修理した。今はバッチリ",
        "BBQしたら煙が車内までこもっちゃった。においの取り方ある？",
        "ホイールのナットが緩んでたので、スタンドで増し締めしてもらいました。次はいつ見ればいい？",
        "ブレーキが効かなくなるおそれのリコールが来てたけど、先週ディーラーで対策済みです。他に見ることある？",
        "お隣のおうちの車から煙が出て騒ぎになってた。うちの車はいつも通りです",
        "走るとカタカタ鳴ってた音の正体は、ドアポケットの空き缶でした",
        "ゴムの焼けるにおいがすると思ったら、前のバスの排気ガスでした",
        "半年前にブレーキが効かなくなって修理してもらった件、その後まったく問題ありません",
        "焚き火したあと車の中が煙臭い",
        "カラカラ鳴ると思ったら、ドアポケットのお菓子の缶だった",
        "去年ブレーキが効かなくなって交換してもらったんですが、保証は何年ですか？",
        "妻がブレーキが効かないって言うから乗ってみたら、普通に止まりました。勘違いでした",
        "焦げ臭いと思ったら、助手席に置いてたたこ焼きの袋でした",
        "キーキー鳴ってたのは、ドアに挟まってたビニール袋だった",
        "半年前に赤いオイルのランプが点いた件、その後は一度も点いてない",
        "車内が煙たいと思ったら、友達がタバコを吸ってた",
        "去年エンジンから火が出て、直してもらってからは好調です",
        "ゴトゴトいう音の正体は、トランクの中の缶ジュースでした",
        "焼肉の帰りで車の中が煙くさい",
        "お向かいの人の車がいつも白い煙を出してる。うちの車は問題ない",
        "BBQの煙が車内に入ってきた",
        "焦げ臭いと思ったら、前を走ってたバスの排気だった。うちの車は関係ない",
        "カタカタ鳴ってたの、後ろの席に挟まったおもちゃの車でした",
        "近所のおっちゃんの軽トラからいつも黒い煙が出とる。うちのは何ともない",
        "昔乗っとった車はよう煙吹いとった。今の車は静かなもんじゃ",
        "運転講習で、ブレーキが効かなくなったらサイドブレーキを引けと教わった",
        "ゴトゴト鳴ってたのは、トランクのスイカでした",
        "車内が焦げ臭いと思ったら、新しく買った芳香剤の香りでした",
        # v17 taught: a repair done and fine, a car repaired last year, a friend's or a colleague's story, a noise
        # that was not the car, a drill
        "先週ブレーキの効きが悪いって相談して直してもらった件、今は快調です。ありがとうございました",
        "昨年ボンネットから煙が出て修理してもらった車なんですが、オイル交換をお願いしたいです",
        "同僚がタイヤが外れかけた話を聞いて、自分のナットも確認したら大丈夫だった",
        "先輩の車のブレーキが効かなくなったところを目撃して、怖くなった",
        "ガタガタ鳴ってたのは車じゃなくて、隣の工事現場でした",
        "避難訓練で車から出火したことにして消火器の使い方を習った",
        "会社で車から出火した想定の訓練をやった",
        # v18 taught: a repair reported done, a snack's smell
        "オイル漏れを直してもらいました。それから一度も垂れてません",
        "車で焼き芋を食べたら焦げた匂いが残ってる",
    ],
)
def test_somebody_elses_scare_or_car_goes_no_higher_than_medium(text: str) -> None:
    """Somebody else's scare or car, a game, a bicycle, a car they used to drive, a repair fine today, a light off,
    a noise that was a thing rolling about."""
    assert keyword_urgency_check(text).level == "medium"


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("給油してるとき、ちょっとガソリンのにおいがする", "low"),
        ("給油してからずっとガソリン臭くて、下にポタポタ垂れてた", "critical"),
        ("黄色いガソリンスタンドのマークが点いたけど給油したら消えた", "low"),
        ("寒い朝、マフラーから白い煙が出たけど5分くらいで出なくなった", "low"),
        ("マフラーから白い煙がずっと出てる", "critical"),
        ("赤いやかんみたいなマークって何？今は点いてない", "low"),
        ("赤い油差しみたいなマークってなんの警告？", "low"),
        ("赤い油圧のランプが点いた、何これ？", "critical"),
        ("急ブレーキでペダルがブルブル震えた。これがABSってやつ？", "low"),
        ("走ってるとハンドルがブルブル震える", "high"),
        ("警告灯が点いてびっくりしたけど半ドアだった", "low"),
        ("ドアを閉めたらすぐ消えた、警告ランプが点いた件", "low"),
        ("警告灯が点いたまま消えない", "high"),
        ("ガソリンのランプがついた。スタンドまであと10キロ", "low"),
        ("車は何も悪くないけど夫の運転が怖い", "low"),
        ("メーターに赤いランプが点いたけど、シートベルトのマークだった", "low"),
        ("赤いランプが点いた。シートベルトは締めてるのに消えない", "critical"),
        ("青い水温のランプが点いてる", "low"),  # the cold-engine light
        ("エンジンをかけたら青い温度計のマークが点いた", "low"),
        ("青いランプが消えたら今度は赤い水温のランプが点いた", "critical"),
        ("寒い朝はマフラーから白い煙が出るけど、冬の湯気だよね", "low"),
        ("冬はマフラーから白い煙が出るけど、しばらく走ると出なくなる", "low"),
        ("マフラーから白い煙、冬の湯気かと思ったらずっと止まらない", "critical"),
        ("寒いとマフラーから白い煙が出るけど、ちょっと走ると出なくなる", "low"),
        ("マフラーから白い煙、少し走ると消えるどころか増えてきた", "critical"),
        ("マフラーから白い煙が出て、すぐ消えない", "critical"),
        ("朝はマフラーから白い煙が出るけど、走り出したら消える", "low"),
        ("寒いとマフラーから白い煙が出て、走り出すと消えるどころか増える", "critical"),
    ],
)
def test_normal_things_the_rules_took_for_faults(text: str, level: str) -> None:
    """Refuelling, the fuel light, white exhaust that clears, a light asked about, ABS pulsing the pedal, a light
    that was a door ajar; beside each, the fault it is not."""
    assert keyword_urgency_check(text).level == level


def test_asking_whether_to_keep_driving_is_no_doubt_that_lowers_the_judgement(judge: UrgencyJudge) -> None:
    """「…正常？」 doubts a fault and caps the judgement by meaning at medium; 「このまま運転して帰っても平気？」
    has the symptom and is about to drive with it: no cap."""
    text = "追突されてから運転席のシートベルトが伸びたまま戻らない。車は普通に動くしこのまま運転して帰っても平気？"
    assert keyword_urgency_check(text).level == "critical"
    assert fast_urgency_check(text, judge).level == "critical"
    assert fast_urgency_check("ブレーキが効かない。このまま走って大丈夫？", judge).level == "critical"
    text = "高速走行中、ブレーキを踏んだらシューと音がして効きがすごく弱い。次のSAまで行けば大丈夫？"
    assert keyword_urgency_check(text).level == "low"  # no rule names a weak brake...
    assert (
        fast_urgency_check(text, judge).level == "critical"
    )  # ...the meaning does, and the question does not cap it
    assert fast_urgency_check("信号待ちでハンドルが重いけど大丈夫？", judge).level == "medium"


@pytest.mark.parametrize(
    "text",
    [
        "先月ブレーキが効きにくくなって部品を交換してもらいました。その後は絶好調です",
        "ハンドル取られる感じがあったけど、アライメント調整してもらってからはまっすぐ走るようになった",
        "ボンネットから湯気が出てて焦ったけど、雨で濡れたのが乾いてるだけっぽい",
    ],
)
def test_a_problem_fixed_or_explained_since_goes_no_higher_than_medium(text: str) -> None:
    assert keyword_urgency_check(text).level == "medium"


def test_each_embedder_is_judged_with_its_own_thresholds() -> None:
    from core.flows.diagnosis.urgency_thresholds import DEFAULT_THRESHOLDS, THRESHOLDS  # noqa: PLC0415

    assert UrgencyJudge(BundledEmbedder()).thresholds == THRESHOLDS["e5q4-chive"]
    assert UrgencyJudge(BundledE5Embedder()).thresholds == THRESHOLDS["e5small-q4"]
    # no thresholds of its own: e5-small's, without a probe (its threshold is chosen for one embedder's vectors)
    assert UrgencyJudge(NgramEmbedder()).thresholds == DEFAULT_THRESHOLDS
    assert dataclasses.replace(THRESHOLDS["e5small-q4"], probe_below=None) == DEFAULT_THRESHOLDS
    assert UrgencyJudge(NgramEmbedder()).probe() is None


class _PlacedVectors:
    """An embedder for the judgement's decision rule alone: each text gets the vector placed for it (the query
    on the first axis, each example at a chosen cosine from it on an axis of its own)."""

    key = "e5q4-chive"  # judged with the bundled default's thresholds: 0.87, 0.02, 0.95
    label = "placed"
    dim = 16

    def __init__(
        self, similarities: dict[str, float], query: str = "query", aliases: dict[str, str] | None = None
    ) -> None:
        self.vectors = {query: np.eye(self.dim, dtype=np.float32)[0]}
        for axis, (text, s) in enumerate(similarities.items(), start=1):
            self.vectors[text] = (
                np.float32(s) * np.eye(self.dim, dtype=np.float32)[0]
                + np.float32(np.sqrt(1 - s * s)) * np.eye(self.dim, dtype=np.float32)[axis]
            )
        # a text embedded as another one is (the query's danger alone, placed with the query or with an example)
        for text, same_as in (aliases or {}).items():
            self.vectors[text] = self.vectors[same_as]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.vectors[t] for t in texts])

    embed_documents = embed_queries


def _placed_judge(
    tmp_path: Path,
    levels: dict[str, list[str]],
    placed: dict[str, float],
    query: str = "query",
    aliases: dict[str, str] | None = None,
) -> UrgencyJudge:
    """A judge over the examples `levels`, each placed at its cosine from `query` in `placed` (0.5 when not in it);
    a text in `aliases` is embedded as the text it names."""
    path = tmp_path / "examples.json"
    path.write_text(json.dumps({"description": "", "levels": levels}), encoding="utf-8")
    everyone = [t for texts in levels.values() for t in texts]
    # each sentence of the query lies where the whole query does, unless `aliases` places it elsewhere (the judgement
    # asks the sentences of a text of several whether one of them is critical: as embedded, car words in katakana)
    sentences = sentences_of(query)
    placed_sentences = {with_katakana_loanwords(s): query for s in sentences} if len(sentences) > 1 else {}
    # ...and so does the text from each of its dangers on (the story cap asks it whether it reads as a report)
    placed_sentences |= {with_katakana_loanwords(told): query for told in from_each_danger(query)}
    aliases = placed_sentences | {with_katakana_loanwords(k): v for k, v in (aliases or {}).items()}
    vectors = _PlacedVectors({t: placed.get(t, 0.5) for t in everyone}, query, aliases)
    return UrgencyJudge(vectors, path)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("low_d_at", "nearest", "level"), [(0.91, "abce", "critical"), (0.918, "abcd", "low")]
)
def test_a_critical_example_within_the_margin_counts_among_the_four_nearest_only(
    tmp_path: Path, low_d_at: float, nearest: str, level: str
) -> None:
    """Low examples a, b, c at 0.93, 0.925, 0.922 and a critical one e at 0.915, within 0.02 of the nearest: as
    the fourth nearest it makes the judgement critical; once a low example d (0.918) is nearer, e is the fifth
    and does not count (K_NEAREST = 4, chosen leave-one-set-out) though it is still within the margin."""
    placed = {"a": 0.93, "b": 0.925, "c": 0.922, "d": low_d_at, "e": 0.915}
    levels = {"critical": ["e"], "high": [], "medium": [], "low": ["a", "b", "c", "d"]}
    judge = _placed_judge(tmp_path, levels, placed)
    result, near = judge.judge("query")
    assert "".join(n.text for n in near) == nearest
    assert result.level == level


@pytest.mark.parametrize(
    ("second_as", "level"), [("calm", "low"), ("soft", "medium"), ("failure", "critical")]
)
def test_a_text_of_several_sentences_is_critical_by_meaning_only_when_one_of_them_is(
    tmp_path: Path, second_as: str, level: str
) -> None:
    """Two sentences no rule finds a danger in, the whole text nearest a critical example (0.93: a long message with a
    failure buried in it lies near the text by its shape): the judgement is that of its most urgent sentence, each
    judged on its own — low when both read low, medium when one reads medium, critical when one reads critical."""
    text = "来週は家族で旅行です。子どもたちも楽しみにしています"
    first, second = "来週は家族で旅行です。", "子どもたちも楽しみにしています"
    levels = {"critical": ["buried", "failure"], "high": [], "medium": ["soft"], "low": ["trip", "calm"]}
    judge = _placed_judge(
        tmp_path,
        levels,
        {"buried": 0.93},
        query=text,
        aliases={first: "trip", second: second_as},
    )
    assert judge.nearest(text)[0].text == "buried"
    result, near = judge.judge(text)
    assert near[0].level == "critical"
    assert result.level == level
    # one sentence: its own likeness stands
    single = _placed_judge(tmp_path, levels, {"buried": 0.93}, query="来週は家族で旅行です")
    assert single.judge("来週は家族で旅行です")[0].level == "critical"


def test_a_reason_quotes_an_example_cut_at_thirty_characters() -> None:
    assert quote("友達の車から煙が出てた話を聞いた") == "「友達の車から煙が出てた話を聞いた」"
    assert quote("あ" * 30) == "「" + "あ" * 30 + "」"
    assert quote("あ" * 29 + "いう") == "「" + "あ" * 29 + "…」"  # 31 characters: 29 and an ellipsis


@pytest.mark.parametrize(
    "note",
    [
        FRAME_NOTE,
        DENIAL_NOTE,
        QUESTION_NOTE.format(level="中"),
        STORY_NOTE.format(example=""),
        CALM_NOTE.format(example=EXAMPLE_NOTE.format(quoted=quote("エンジンチェックランプ（黄色）が点いた"))),
        PROBE_NOTE,
    ],
)
def test_a_reason_loses_its_cap_note_and_keeps_its_example(note: str) -> None:
    """What a banner above medium shows of a capped judgement's reason: the reason, with its quoted example (brackets
    and all), without the note that says the judgement stopped at medium."""
    quoted = f"{MEANING_REASON}{quote('ランプ（黄色）が点いて、ブレーキが効かない')}"
    assert without_cap_note(quoted + note) == quoted
    assert without_cap_note("火災・発火の恐れ" + note) == "火災・発火の恐れ"
    assert without_cap_note(quoted) == quoted


def test_a_cap_note_two_reasons_end_with_is_said_once() -> None:
    """The banner's 判定理由: when the rules' frame and the judgement by meaning both stopped at medium for the same
    frame, the note is said once, after the last reason (v64's sweet potatoes showed it twice). Different notes, or a
    reason without one, are kept as they are."""
    frame = FRAME_NOTE
    example = f"{MEANING_REASON}{quote('ばあちゃんが「車から煙が出とる」って電話してきたけど')}"
    assert (
        joined_reasons(["発煙（煙が出ている）" + frame, example + frame])
        == f"発煙（煙が出ている）、{example}{frame}"
    )
    question = QUESTION_NOTE.format(level="中")
    assert joined_reasons(["発煙（煙が出ている）" + frame, example + question]) == (
        f"発煙（煙が出ている）{frame}、{example}{question}"
    )
    assert (
        joined_reasons(["オーバーヒート", "発煙（煙が出ている）" + frame])
        == f"オーバーヒート、発煙（煙が出ている）{frame}"
    )
    assert joined_reasons(["a" + frame, "b" + frame, "c" + frame]) == f"a、b、c{frame}"
    assert joined_reasons([]) == ""


STORY = "友達の車から煙が出てた話を聞いた"  # not urgent, names a danger by rule: a story about one
NOT_A_STORY = "洗車の予約をお願いしたい"  # not urgent, names none


@pytest.mark.parametrize(
    ("text", "placed", "level"),
    [
        ("ボンネットから煙が出たって騒いでたけど湯気でした", {STORY: 0.90}, "medium"),  # told like the story
        ("ボンネットから煙が出たって騒いでたけど湯気でした", {STORY: 0.875}, "critical"),  # not near enough
        (
            "ボンネットから煙が出たって騒いでたけど湯気でした",
            {NOT_A_STORY: 0.90},
            "critical",
        ),  # names no danger
        # a critical example within the margin makes the judgement by meaning critical: no cap
        (
            "ボンネットから煙が出たって騒いでたけど湯気でした",
            {STORY: 0.90, "ボンネットから煙": 0.895},
            "critical",
        ),
        # ...also when a doubt caps that judgement at medium afterwards (v3's flooded Leaf, judged with e5)
        ("ボンネットから煙が出たのは正常ですか", {STORY: 0.90, "ボンネットから煙": 0.895}, "critical"),
        ("妻が運転してて、ボンネットから煙が出た", {STORY: 0.90}, "critical"),  # a clause before the danger
        ("今日ボンネットから煙が出た", {STORY: 0.90}, "critical"),  # a turn to today before it
        ("ラジコンを探してたらボンネットから煙が出た", {STORY: 0.90}, "critical"),  # a step of the story
    ],
)
def test_a_text_told_like_a_story_about_a_danger_has_the_rules_capped_at_medium(
    tmp_path: Path, text: str, placed: dict[str, float], level: str
) -> None:
    """The rules find smoke (critical). The nearest example is not urgent and names a danger by rule (STORY): the
    text is told like it, and with no critical example near the rules are capped at medium — unless the example is
    not near enough (story_similarity 0.88), names no danger, or something comes before the danger in the text (a
    clause, a step of the story, today): then what follows happened, whatever the neighbours say."""
    assert keyword_urgency_check(text).level == "critical"
    levels = {"critical": [t for t in placed if t.startswith("ボンネット")], "low": [STORY, NOT_A_STORY]}
    _assert_smoke_capped_or_not(
        _placed_judge(tmp_path, levels, placed, text),
        text,
        level,
        "（人から聞いた話・昔の話・たとえ話など、危険を話題にしているだけの文に意味が近いため、"
        "この判定では緊急度は中まで。近い例: 「友達の車から煙が出てた話を聞いた」）",
    )


def _assert_smoke_capped_or_not(judge: UrgencyJudge, text: str, level: str, note: str) -> None:
    """The fast path's level of `text` is `level`; capped at medium, its reason is the smoke rule's with `note`."""
    result = fast_urgency_check(text, judge)
    assert result.level == level
    if level == "medium":
        assert result.reasons[0] == "発煙（煙が出ている）" + note


@pytest.mark.parametrize(("danger_as", "level"), [("ボンネットから煙", "critical"), (STORY, "medium")])
def test_a_danger_after_a_place_keeps_the_rules_when_it_reads_as_a_report(
    tmp_path: Path, danger_as: str, level: str
) -> None:
    """The whole text lies among stories (STORY, 0.90: 「ドラマの撮影現場の近くで…」 among drama stories once v82 and v83
    joined the examples); what it tells from its danger on is asked again (reported_from_its_danger): embedded where a
    critical example lies, the danger is a report and the rules keep critical; where the story lies, the cap stays."""
    text = "ドラマの撮影現場の近くでボンネットから煙が出た"
    assert keyword_urgency_check(text).level == "critical" and not told_after_a_step(text)
    told = from_each_danger(text)[0]
    assert told != normalize_symptom(text)
    placed = {STORY: 0.90, "ボンネットから煙": 0.5}
    levels = {"critical": ["ボンネットから煙"], "low": [STORY, NOT_A_STORY]}
    judge = _placed_judge(tmp_path, levels, placed, text, aliases={told: danger_as})
    _assert_smoke_capped_or_not(
        judge,
        text,
        level,
        "（人から聞いた話・昔の話・たとえ話など、危険を話題にしているだけの文に意味が近いため、"
        "この判定では緊急度は中まで。近い例: 「友達の車から煙が出てた話を聞いた」）",
    )


CALM_LOW = ("洗車の予約をお願いしたい", "ハンドルカバーを付けたい")  # not urgent, name no danger
CALM_MEDIUM = "ワイパーがビビって拭き残しが出る"
CALM_QUESTION = "洗車っていくらですか？"  # not urgent, a question
SMOKE_TALK = "ボンネットから煙が出たって騒いでたけど湯気でした"
CALM = {CALM_LOW[0]: 0.90, CALM_LOW[1]: 0.89, CALM_MEDIUM: 0.88}


@pytest.mark.parametrize(
    ("text", "placed", "level"),
    [
        (SMOKE_TALK, CALM, "medium"),  # the three nearest not urgent (low, low, medium)
        (SMOKE_TALK, CALM | {"ボンネットから煙": 0.80}, "medium"),  # an urgent fourth nearest does not count
        # the third nearest is urgent
        (SMOKE_TALK, CALM | {CALM_MEDIUM: 0.5, "エンジン警告灯が点いた": 0.88}, "critical"),
        # none near enough to judge by
        (SMOKE_TALK, {CALM_LOW[0]: 0.86, CALM_LOW[1]: 0.85, CALM_MEDIUM: 0.84}, "critical"),
        ("妻が運転してて、ボンネットから煙が出た", CALM, "critical"),  # a clause before the danger
        (SMOKE_TALK, CALM | {CALM_LOW[1]: 0.5, CALM_QUESTION: 0.89}, "critical"),  # a question, the text none
    ],
)
def test_a_text_whose_three_nearest_examples_are_not_urgent_has_the_rules_capped_at_medium(
    tmp_path: Path, text: str, placed: dict[str, float], level: str
) -> None:
    """The rules find smoke (critical). When the K_CALM (3) nearest examples are all low or medium and the nearest is
    near enough to judge by (0.87), nothing like the text was ever urgent: the rules are capped at medium, as by a
    story — unless one of the three is urgent or a question (the text is none), or something comes before the danger
    in the text."""
    assert keyword_urgency_check(text).level == "critical"
    levels = {
        "critical": ["ボンネットから煙"],
        "high": ["エンジン警告灯が点いた"],
        "medium": [CALM_MEDIUM],
        "low": [*CALM_LOW, CALM_QUESTION],
    }
    _assert_smoke_capped_or_not(
        _placed_judge(tmp_path, levels, placed, text),
        text,
        level,
        "（意味の近い症状例がどれも急ぎではないため、この判定では緊急度は中まで。近い例: 「洗車の予約をお願いしたい」）",
    )


CLAUSE_FIRST = "妻が運転してて、ボンネットから煙が出た"  # a clause before the danger: told after a step
STEP_CALM = {
    "low": [
        "洗車の予約をお願いしたい",
        "ハンドルカバーを付けたい",
        "車検の見積もりがほしい",
        "ナビの地図を更新したい",
    ]
}
STEP_CALM_AT = dict(zip(STEP_CALM["low"], (0.93, 0.92, 0.91, 0.90), strict=True))


@pytest.mark.parametrize(
    ("placed", "danger_as", "level"),
    [
        (
            STEP_CALM_AT,
            CLAUSE_FIRST,
            "medium",
        ),  # the four nearest low, the nearest at 0.93; so are the danger's
        (STEP_CALM_AT | {"洗車の予約をお願いしたい": 0.80}, CLAUSE_FIRST, "medium"),  # the nearest at 0.92
        # the nearest below 0.90 (step_calm_similarity): calm (it caps a text that opens with its danger), not calmer
        ({t: s - 0.05 for t, s in STEP_CALM_AT.items()}, CLAUSE_FIRST, "critical"),
        (
            STEP_CALM_AT | {"ワイパーがビビる": 0.905},
            CLAUSE_FIRST,
            "critical",
        ),  # a medium example among the four
        (STEP_CALM_AT, "ボンネットから煙", "critical"),  # the danger alone lies by a critical example
        # even a nearest low example that says almost the same (0.96) does not cap it: 「教習所で習った通りに走ってたのに
        # ブレーキが効かなくなった」 lies at 0.951 by a driving-school story (tried after v40, rejected)
        (STEP_CALM_AT | {"洗車の予約をお願いしたい": 0.96}, "ボンネットから煙", "critical"),
    ],
)
def test_a_danger_told_after_a_step_is_capped_only_in_a_calmer_neighbourhood(
    tmp_path: Path, placed: dict[str, float], danger_as: str, level: str
) -> None:
    """Something told before the danger lifts the story and calm caps (told_after_a_step), unless the four nearest
    examples are all low, the nearest at least 0.90 near, and the same holds for the text from each danger on
    (calm_after_a_step): 「教習所の帰りにブレーキが効かなくなった」 lies among driving-school stories, its danger does
    not."""
    assert told_after_a_step(CLAUSE_FIRST)
    assert keyword_urgency_check(CLAUSE_FIRST).level == "critical"
    [danger] = from_each_danger(CLAUSE_FIRST)
    assert danger == "煙が出た"
    levels = {"critical": ["ボンネットから煙"], "high": [], "medium": ["ワイパーがビビる"], **STEP_CALM}
    judge = _placed_judge(tmp_path, levels, placed, CLAUSE_FIRST, {danger: danger_as})
    _assert_smoke_capped_or_not(
        judge,
        CLAUSE_FIRST,
        level,
        "（意味の近い症状例がどれも急ぎではないため、この判定では緊急度は中まで。近い例: "
        f"{quote(judge.nearest(CLAUSE_FIRST)[0].text)}）",
    )


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("セルフのスタンドで静電気がバチってきた。あれでガソリンに引火することってあるんですか", "medium"),
        (
            "はしってる とちゅう で くるま が とまらなく なる こと って ある の です か まご が しんぱい してて",
            "medium",
        ),
        ("給油したらガソリンのにおいがするのって普通ですよね？買ったばかりで", "medium"),
        ("給油口からガソリンのにおいがするけど、このまま帰っても大丈夫ですよね？", "critical"),
        # v42: whether a way of using the car is bad, with a short word after
        ("サイドブレーキって完全に戻さないとまずいんですか？今はちゃんと戻してます", "medium"),
        ("ガソリンが漏れてるのって早く直さないとまずいんですか？今高速を走ってて", "critical"),
        # v51: whether it might, said with 「たり」 (in kana there)
        ("昨日 たきびの ひのこが とんできて、ボンネットに しろいあとが ついた。さびたりしますか", "medium"),
        ("ボンネットに しろいあとが ついた。いま 運転中 で どうしたら", "critical"),
        # v71: what a lamp or a mark is (「あれは何のランプですか？」); not when a red one is lit
        ("メーターの中の緑色の車のマーク、あれは何のランプですか？", "medium"),
        ("この黄色いびっくりマークって何の意味？", "medium"),
        ("赤いランプが点いた。何のランプ？", "critical"),
        ("何のランプか分からないけど、赤いのが点いてる", "critical"),
    ],
)
def test_a_question_whether_it_can_happen_or_is_normal_caps_the_judgement_by_meaning(
    tmp_path: Path, text: str, level: str
) -> None:
    """A critical example near: asked whether it can happen at all, or whether it is normal with a short word after,
    the judgement by meaning stops at medium and says why; asked whether it is safe to drive home, it does not."""
    judge = _placed_judge(tmp_path, {"critical": ["ガソリンが漏れてる"]}, {"ガソリンが漏れてる": 0.92}, text)
    result = judge.judge(text)[0]
    assert result.level == level
    note = QUESTION_NOTE.format(level="中") if level == "medium" else "（緊急度: 緊急）"
    assert result.reasons == [f"{MEANING_REASON}「ガソリンが漏れてる」{note}"]


def test_asking_what_a_lamp_is_is_no_report_unless_a_red_one_is_lit_or_the_owner_drives_now() -> None:
    assert asks_what_it_is("メーターの中の緑色の車のマーク、あれは何のランプですか？")
    assert asks_what_it_is("このオレンジのアイコン、なんていう表示なんですか")
    assert asks_what_it_is("ハンドルの横のボタンって何の機能？")
    assert not asks_what_it_is("赤いランプが点いた。何のランプ？")
    assert not asks_what_it_is("何のランプですか？今高速を走ってて、どうしたらいい")
    assert not asks_what_it_is("何のランプか分からないけど点いてる")  # the question is not how it ends
    assert not asks_what_it_is("ブレーキが効かない")


def test_asking_whether_it_can_happen_is_no_report_unless_asking_what_to_do_now() -> None:
    assert asks_whether_it_can_happen("AT車でもエンストすることってあるんですか？")
    assert asks_whether_it_can_happen("くるま が とまらなく なる こと って ある の です か")
    assert asks_whether_it_can_happen("こんなことってありえますか")
    # v44: a question mark for か
    assert asks_whether_it_can_happen("ホイールキャップって走行中に外れることある？")
    assert not asks_whether_it_can_happen("こんなことある？今運転中でブレーキが効かない")
    assert not asks_whether_it_can_happen("こんなことってあるんですか、今運転中でどうしたらいい")
    assert not asks_whether_it_can_happen("ブレーキが効かないことがある")
    # v51: whether it might, said with 「たり」
    assert asks_whether_it_can_happen("ぼんねっとに しろいあとが ついた。さびたりしますか")
    assert asks_whether_it_can_happen("雨の日に乗ったらエンジン止まったりせん？")
    assert not asks_whether_it_can_happen("エンジンが止まったりかかったりする")
    assert not asks_whether_it_can_happen("止まったりしますか？今運転中でどうしたらいい")


@pytest.mark.parametrize(
    ("text", "by_rule", "level"),
    [
        # a question about brake fade learnt at school, a slight shimmy at speed: every near example is not urgent
        (
            "自動車学校の授業でフェード現象でブレーキが効かなくなるって習ったけど、どういう仕組み？",
            "critical",
            "medium",
        ),
        ("90キロくらいでハンドルがちょっとだけブルブルする", "high", "medium"),
        # a danger told first, then a harmless sentence: the danger's own sentence has urgent neighbours
        ("ブレーキが効かなくなった。教習所で習ったことを思い出してます", "critical", "critical"),
        ("ボンネットから煙が出てる。車検の予約はまた今度にします", "critical", "critical"),
        # a report whose nearest examples are questions about the same lamp (「…ってどういう意味？今は点いてない」)
        ("赤い油さしみたいな警告灯が点いた", "critical", "critical"),
        # a danger relayed (its nearest examples are remarks quoted), and the owner asks what to do now
        ("母に「ブレーキが効かない」って言われて、今どうしたらいい？", "critical", "critical"),
        # v40 taught: whether something can happen at all, spaces or not, and whether it is normal, a short word after:
        # asked, not reported (the caps are tested with placed examples; with the margin floor at 0.89 no example raises
        # these); asking whether it is safe (「大丈夫ですよね？」) is no such doubt
        (
            "セルフのスタンドで静電気がバチってきた。あれでガソリンに引火することってあるんですか",
            "low",
            "low",
        ),
        (
            "はしってる とちゅう で くるま が とまらなく なる こと って ある の です か まご が しんぱい してて",
            "low",
            "low",
        ),
        ("走ってたら急にブレーキが効かなくなった、こんなことってあるんですか", "critical", "critical"),
        ("電気ケトルから湯気がもうもう出るのって普通ですよね？買ったばかりで", "low", "low"),
        (
            "明日から高速で500キロ帰省なんですが、さっき見たら後ろのタイヤの横っ腹がボコッとこぶみたいに膨らんでる。"
            "空気は入ってるし大丈夫ですよね？",
            "high",  # a bulge in the sidewall is tyre damage by rule
            "critical",
        ),
        # a preparation for an accident one day; the same preparation used now
        (
            "高速の非常電話の場所、ちゃんと覚えとかないとなーと思った もしもの事故のときのために",
            "low",
            "low",
        ),
        (
            "もしもの事故のときのために積んでた消火器を使った、ボンネットから火が出てる",
            "critical",
            "critical",
        ),
        # v41 taught: a grandfather's old story; a question how a leak is told, asked to know
        ("じいちゃんが昔、走っとる最中にタイヤが外れた話を毎年正月になると自慢げにする", "medium", "medium"),
        ("ガソリン漏れって臭いでわかるもんなん?うちのは漏れてへんけど知っときたくて", "low", "low"),
    ],
)
def test_the_calm_neighbourhood_with_the_bundled_examples(
    judge: UrgencyJudge, text: str, by_rule: str, level: str
) -> None:
    assert keyword_urgency_check(text).level == by_rule
    assert fast_urgency_check(text, judge).level == level


def test_a_cap_names_its_example_once_when_the_judgement_by_meaning_quotes_it(judge: UrgencyJudge) -> None:
    """The calm cap's nearest example is the one the judgement by meaning (medium) quotes: the banner quotes it once,
    in the judgement's reason."""
    result = fast_urgency_check("90キロくらいでハンドルがちょっとだけブルブルする", judge)
    assert result.level == "medium"
    assert result.reasons == [
        "振動（意味の近い症状例がどれも急ぎではないため、この判定では緊急度は中まで）",
        "意味の近い症状例「80キロくらいでハンドルがちょっとブルブルする」（緊急度: 中）",
    ]


@pytest.mark.parametrize(("critical_at", "level"), [(0.891, "critical"), (0.889, "low")])
def test_a_critical_example_raises_the_judgement_only_when_itself_near_enough(
    tmp_path: Path, critical_at: float, level: str
) -> None:
    """The nearest example is low at 0.905; a critical one within the margin (0.02) raises the judgement to
    critical at 0.891, not at 0.889: below the margin floor (0.89) the likeness is too faint to count."""
    judge = _placed_judge(tmp_path, {"critical": ["e"], "low": ["a"]}, {"a": 0.905, "e": critical_at})
    assert judge.judge("query")[0].level == level


@pytest.mark.parametrize(("embedder", "found"), [(BundledEmbedder(), True), (BundledE5Embedder(), False)])
def test_a_question_in_other_words_recalls_the_memory_with_the_word_vectors(
    tmp_path: Path, embedder: BundledEmbedder | BundledE5Embedder, found: bool
) -> None:
    """「弦楽器」 is nowhere in the memory of the guitar; among 300 other episodes the bundled embedder (e5 beside
    the word vectors) brings it back, the sentence model alone does not."""
    repo, collection, guitar_id = _guitar_among_300(tmp_path, embedder)
    result = retrieve(repo, collection, [], "弦楽器の練習、指先は痛くならない？", NOW)
    assert (guitar_id in [c.unit_id for c in result.selected]) is found


def test_the_vector_lane_counts_twice_in_the_fusion(tmp_path: Path) -> None:
    """The guitar is found by the vector lane alone: its RRF is twice the term of its rank there, normalised by the
    weights of the lanes that returned hits (the vector lane 2, each other lane 1); the trace says so."""
    from core.flows.memory.scoring import rrf_term  # noqa: PLC0415

    repo, collection, guitar_id = _guitar_among_300(tmp_path, BundledEmbedder())
    result = retrieve(repo, collection, [], "弦楽器の練習、指先は痛くならない？", NOW)
    guitar = next(c for c in result.candidates if c.unit_id == guitar_id)
    assert guitar.lanes == ["vector/Q1"]
    rank = next(h["rank"] for h in result.lanes["vector/Q1"] if h["unit_id"] == guitar_id)
    assert guitar.rrf == pytest.approx(2 * rrf_term(rank))
    others = [name for name, hits in result.lanes.items() if hits and name != "vector/Q1"]
    assert guitar.rrf_norm == pytest.approx(guitar.rrf / ((2 + len(others)) * rrf_term(0)))
    assert result.trace()["thresholds"]["vector_lane_weight"] == 2.0


def _guitar_among_300(
    tmp_path: Path, embedder: BundledEmbedder | BundledE5Embedder
) -> tuple[MemoryRepository, Collection, int]:
    from core.flows.memory.sample_data import Exchange, generate_conversation, load_exchanges  # noqa: PLC0415

    repo = memory_repository(open_store(tmp_path), LOCAL_PERSON, lambda: NOW)
    collection = memory_collection(open_chroma(tmp_path), LOCAL_PERSON, embedder)
    guitar = Exchange(
        NOW - 40 * 86_400, "三十年ぶりにギターを弾きたくなって、中古のアコギを買った。", "いいですね！"
    )
    *_, guitar_id = load_exchanges(
        repo, collection, demo_client(), [*generate_conversation(NOW, 300, seed=11), guitar]
    )
    return repo, collection, guitar_id


def test_the_examples_hold_the_example_sets_and_never_the_held_out_one() -> None:
    """The sets before the newest are among the judgement's examples (so their figures measure nothing); the
    newest, the held-out figure of tests/bench/meaning.py, never is."""
    data_dir = Path(__file__).resolve().parents[1] / "data" / "meaning"
    levels = json.loads(EXEMPLARS_FILE.read_text(encoding="utf-8"))["levels"]
    examples = {(text, level) for level, texts in levels.items() for text in texts}
    earlier: set[str] = set()
    for name in ("urgency_phrasings.json", *(f"urgency_phrasings_v{i}.json" for i in range(2, 84))):
        items = json.loads((data_dir / name).read_text(encoding="utf-8"))["items"]
        assert {(x["text"], x["level"]) for x in items} <= examples, name
        earlier |= {x["text"] for x in items}
    held_out = json.loads((data_dir / "urgency_phrasings_v84.json").read_text(encoding="utf-8"))["items"]
    assert len(held_out) == 100
    # a short phrasing two writers both wrote is among the examples as the earlier set's (or, once, as one of the
    # examples written by hand before the sets: v33's 「エアコンの効きが前より弱い」)
    written_twice = {"エアコンの効きが前より弱い"}
    assert {x["text"] for x in held_out} & {text for text, _ in examples} <= earlier | written_twice


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("ブレーキが効かない。自転車とぶつかりそうになった", "critical"),  # a bicycle on the road: no frame
        ("焼肉の後で車の中が煙くさい。走ってるとボンネットからも煙が出てくる", "critical"),
        ("昔からの車だけど今日ブレーキが効かなくなった", "critical"),
        ("今日はブレーキが効かない", "critical"),
        ("水温の警告灯が点いてる", "critical"),
        ("ブレーキが効かない。今の車はこれで二台目", "critical"),
        ("自転車をよけたらブレーキが効かなくなった", "critical"),
        ("ブレーキが自転車のブレーキみたいにスカスカで効かない", "critical"),
        ("気のせいかと思ったら本当にボンネットから煙が出てた", "critical"),
        ("ペンが転がってるのかと思ったら、ハンドルが効かなくなった", "critical"),
        ("それ以来問題なかったのに、今朝ボンネットから煙が出た", "critical"),
        ("今日は何ともなかったけど、さっきからブレーキが効かない", "critical"),
        ("点検で問題なしと言われたのに、またブレーキが効かない", "critical"),
        ("修理してもらって普通に走れてたけど、今日ハンドルが効かない", "critical"),
        ("冷却水のサブタンクがぐつぐつ沸騰してる", "critical"),
        ("温度のランプが赤く点滅してる", "critical"),
        ("オイル漏れかと思ったら、エアコンの水じゃなくて黒いオイルだった", "critical"),
        ("ほこりが焼けるにおいかと思ったけど、ずっと焦げ臭い", "critical"),
        ("焚き火してたら、ボンネットから煙が出てきた", "critical"),
        ("今はバッチリだけど、さっきブレーキが効かなかった", "critical"),
        ("ガツンと音がしてからハンドルが右に持っていかれる", "critical"),
        ("ハンドルを切っても全然反応しない", "critical"),
        ("BBQしたらボンネットから煙が出てきた", "critical"),
        ("タイヤのナットを増し締めしてもらいました。でも走るとタイヤがグラグラする", "critical"),
        ("タイヤのナットを増し締めしてもらった。今朝またホイールのナットが緩んでた", "critical"),
        ("リコールは対策済みなのに燃料が漏れてる", "critical"),
        ("リコールの対策済みだった。さっきから燃料が漏れてる", "critical"),
        ("隣のおうちの車と同じで、うちの車もボンネットから煙が出た", "critical"),
        ("音の正体は空き缶だった。けどハンドルが効かない", "critical"),
        ("ハンドルがガタガタ暴れて押さえきれない", "critical"),  # v14 taught: steering that cannot be held
        ("ブレーキを踏んでも止まるまでにいつもより長くかかる", "critical"),  # ...and a longer stop
        ("止まるまでの距離が伸びた気がする", "critical"),
        ("信号で車が止まるまで待ってた", "low"),
        ("焦げ臭いと思ったら、うちの車のエンジンルームから煙が出てた", "critical"),
        ("バーベキューしてたら煙が車にかかってた。と思ったらボンネットから煙が出てた", "critical"),
        ("勘違いかと思ったけど、本当にブレーキが効かない", "critical"),
        ("その後まったく問題ありませんでしたが、今朝ブレーキが効かなくなった", "critical"),
        ("カラカラ鳴ると思ったら、缶じゃなくてタイヤが外れかけてた", "critical"),
        ("先月ブレーキを修理してもらったんですが、保証期間中なのにまたブレーキが効かない", "critical"),
        ("去年ラジエーター替えてもらったんですが、保証って今日ボンネットから煙が出ても使える？", "critical"),
        ("先月ラジエーター替えてもらった。さっきハンドルが取られて曲がれない", "critical"),
        ("焦げ臭いと思ったら、エンジンルームに置き忘れたウエスが燃えてました", "critical"),  # v15 taught
        ("焦げ臭いと思ったら、置いてた荷物じゃなくてボンネットから煙が出てた", "critical"),
        ("あれ以来一度も点いてませんが、今日また赤いオイルのランプが点いた", "critical"),
        ("タバコ吸ってたらボンネットから煙が出てきた", "critical"),
        ("BBQの煙が車に流れてきたと思ったら、エンジンから煙が出てた", "critical"),
        ("うちの車は大丈夫と思ってたけど、今朝ブレーキが効かなくなった", "critical"),
        ("うちの車は無事だと思ってたのに、ボンネットから煙が出てる", "critical"),
        ("隣のおじさんの車と同じで、うちの車もブレーキが効かない", "critical"),
        ("修理してもらってから絶好調だったのに、今日ハンドルが効かない", "critical"),
        ("焚き火の帰りにボンネットから煙が出た", "critical"),
        ("ガタガタ鳴ってたの、ホイールが外れかけてたせいでした", "critical"),  # v16 taught
        ("キーキー鳴ってたのはブレーキが効かなくなる前兆でした", "critical"),
        ("言われた通り消えたけど、今度はボンネットから煙が出てきた", "critical"),
        ("煙がすごいと思ったら、前のトラックの排気じゃなくてうちのボンネットからだった", "critical"),
        ("研修の帰りにブレーキが効かなくなった", "critical"),
        # a film, the news, a game or a driving school as the place or the time, not the story: no frame
        ("映画館の駐車場でボンネットから煙が出た", "critical"),
        ("教習所の帰りにブレーキが効かなくなった", "critical"),
        ("ニュースを見てたら車から焦げ臭いにおいがしてきた", "critical"),
        ("テレビ見てたら駐車場の車から煙が出てるって言われた", "critical"),
        ("ゲームしてたら車が燃えてた", "critical"),
        ("おもちゃ屋の駐車場でボンネットから煙が出た", "critical"),
        ("試験勉強の帰りにブレーキが効かない", "critical"),
        # a frame's word met in passing, before the danger itself: no frame
        ("快適に走ってたら急にブレーキが効かなくなった", "critical"),
        ("友達の家に向かう途中でブレーキが効かない", "critical"),
        ("買い物のために出かけたらボンネットから煙が出てきた", "critical"),
        ("近所のスーパーの駐車場でエンジンから火が出た", "critical"),
        ("隣の家に行こうとしたらブレーキが効かない", "critical"),
        ("キャンプの準備をしてたら車の下にガソリンが漏れてた", "critical"),
        ("直ったと思ったのに、またブレーキが効かない", "critical"),
        ("前を走ってたら急にハンドルが効かなくなった", "critical"),
        ("旅行に備えて点検しようと思ってたら、ボンネットから煙が出てきた", "critical"),
        ("何もしてないのに車が勝手に加速していく", "critical"),  # 「何もしてない」 holds no もし
        ("もしもの時のために保険に入ってるけど、今ブレーキが効かなくなった", "critical"),
        ("もしブレーキが効かなくなったらどうすればいい？", "low"),
        # v17 taught (its two missed criticals): someone's cigarette beside a fuel leak frames nothing, and a road
        # like a river with the wheels half under water is critical
        ("ガソリンの臭いがきつくて、下から何か垂れてる。隣で友達がタバコ吸ってるんだけど", "critical"),
        ("道が冠水してて、タイヤが半分くらい水に浸かってる", "critical"),
        # ...and the danger side of v17's frames: the same words, then today's danger, a step of the story, a drill
        # that was not one, a colleague's car one is driving
        ("先月修理してもらった車なんですけど、今朝またボンネットから煙が出た", "critical"),
        ("去年直してもらった件、今はバッチリだったのに、さっきブレーキが効かなくなった", "critical"),
        ("同僚が見てる前でボンネットから煙が出た", "critical"),
        ("友達の話を聞きに行く途中でブレーキが効かなくなった", "critical"),
        ("消防訓練中にボンネットから煙が出てきた", "critical"),
        ("避難訓練の想定じゃなくて本当に煙が出てる", "critical"),
        ("同僚の車でボンネットから煙が出た", "critical"),
        ("車の下にぽたぽた垂れてて、嗅いだらガソリンの匂いだった", "critical"),  # not a smell explained away
        ("水がドアの下まで来たら危ないって本当？", "low"),
        ("エアコンの温度を真っ赤にしても暖まらない", "low"),
        ("急ブレーキでガガガって振動したけど、ABSが働いただけですよね", "low"),
        ("布団がふかふかで気持ちいい、車のシートもふかふかにしたい", "low"),
        # v18 taught: words with another sense (a company's SNS 炎上, a phone's battery, a punk band, a head that
        # overheats), petrol on one's work clothes, a cold exhaust dripping water; beside each, the danger it is not
        ("会社のSNSが炎上して大変。ついでに車検の予約をしたい", "low"),
        ("車がトンネルで炎上してる", "critical"),
        ("スマホのバッテリーがすぐ上がるので車で充電したい", "low"),
        ("スマホの充電しようとしたら車のバッテリーが上がってた", "high"),
        ("パンクバンドの機材を積みたい", "low"),
        ("走ってたらパンクした", "high"),
        ("仕事で頭がオーバーヒートしそう。ところで洗車の予約を", "low"),
        ("頭がオーバーヒートしそうだけど、それより車がオーバーヒートしてる", "critical"),
        ("作業着がガソリン臭いんだけど、シートに匂いうつる？", "low"),
        ("作業着がガソリン臭いと思ったら、車の下からガソリンが漏れてた", "critical"),
        ("寒い朝マフラーから白い湯気が出て、水もポタポタ垂れてる", "low"),
        ("寒い朝マフラーから白い湯気が出て水もポタポタ垂れてて、甘い匂いがずっとする", "critical"),
        ("焼き芋食べてたら、ボンネットから煙が出てきた", "critical"),
        ("オイル漏れを直してもらいました。でも今朝また漏れてる", "critical"),
        # v19 taught: a joke owned up to, incense or a campfire's smoke in the cabin, the neighbour's car (お隣さんの)
        ("ブレーキが効かないっていうのは冗談で、ワイパーを替えたい", "medium"),
        ("冗談抜きで、ブレーキが効かない", "critical"),
        ("冗談じゃなくて本当にボンネットから煙が出てる", "critical"),
        ("ブレーキが効かない、冗談じゃない", "critical"),
        ("お香を焚いたら煙がこもった。消臭したい", "medium"),
        ("お香を焚いたら、ボンネットから煙が出てきた", "critical"),
        ("焚き火のそばに停めてたから車内が煙くさい", "medium"),
        ("焚き火のそばに停めてたら、ボンネットから煙が出てきた", "critical"),
        ("お隣さんの車がエンストしてた。うちのは元気", "medium"),
        ("お隣さんの車で送ってもらってたら、ブレーキが効かなくなった", "critical"),
        ("お隣さんの車と同じように、うちの車もエンストした", "high"),
        # v20 taught: the brake pressed and the car not stopping (also in kana, small ぃ and all), the steering
        # locking while driving; a likeness wondered about, an idiom, a child's question, idle stop mistaken for a
        # stall, a light gone out once the cap was closed, an advert, the old man next door's car
        ("ぶれーきふんでもとまらなぃ、いまさかみちくだってる", "critical"),
        ("ブレーキかけても止まらん", "critical"),
        ("ブレーキ踏み込んでも止まらない", "critical"),
        ("ブレーキかけても鳴きが止まらない", "low"),  # a squeal that goes on: no brake failure
        ("急にハンドルがガクッとロックしたみたいに動かなくなり、力ずくで少し動かせる", "critical"),
        ("ハンドルロックがかかって動かなくなった", "low"),  # the parked car's lock
        ("やかんの湯気を見て、オーバーヒートってこんな感じかなと思った", "medium"),
        ("ブレーキ抜けるってこんな感じなんや、いま全然止まらん", "critical"),
        ("ブレーキ抜けるってこんな感じかなって思った、ペダルが床まで入る", "critical"),
        ("うちの息子はブレーキが効かない性格で困る", "medium"),
        ("部長が頭から湯気出して怒ってた", "low"),
        ("子どもに「車って火がついたら爆発するの？」って聞かれた", "medium"),
        ("子どもに「なんか焦げ臭くない？」って聞かれて、見たらボンネットから煙が出てる", "critical"),
        ("なんでくるまのタイヤってパンクするの？", "medium"),
        ("なんで車のブレーキって急に効かなくなるの？今まさに効かないんだけど", "critical"),
        ("エンジンが止まった！と思ったらアイドリングストップだった", "medium"),
        ("エンジン止まったと思ったらアイドリングストップじゃなくて本当にエンストしてた", "high"),
        ("チェックランプがついたけど給油キャップを締め直したら消えた", "medium"),
        ("チェックランプ締め直したら消えたけど、今度は赤い油圧ランプが点いた", "critical"),
        ("【広告】エンジン炎上寸前！？当店の無料点検で解消！", "medium"),
        ("当店の配達車から煙が出てます", "critical"),
        ("弊社の社用車でブレーキが効かなくなりました", "critical"),
        ("隣のじっちゃんの車、雪に埋まったけど何ともなかった", "low"),
        # v21 taught: a seat belt that no longer pulls out after a crash; a boss who "overheats" or "stalls", a
        # song's lyrics, an advert (CM), an apology that the text is not about a car, an old accident declared
        ("追突事故のあと、運転席のシートベルトも引き出せなくなりました", "critical"),
        ("シートベルトが引き出せないときがある", "low"),  # no crash: the belt's lock on a slope
        ("上司が今日も朝からオーバーヒートしてて会社行きたくない", "medium"),
        ("うちの部長、完全にエンストしとるわ", "medium"),
        ("夫がオーバーヒートしてるって電話してきた", "critical"),  # a report of his car
        ("部長が運転中にエンストして高速で止まった", "critical"),
        ("歌の歌詞で「ブレーキが効かない」ってあるけど笑", "medium"),
        ("車のCMで「炎のような加速」って言ってた", "medium"),
        ("水深30cmでドアの下まで水が来てる、エンジンから煙が出てる", "critical"),  # centimetres, not a CM
        ("電気ケトルがオーバーヒートして止まった笑 車じゃなくてすみません", "medium"),
        ("車じゃなくてすみません、と言いたいところですがブレーキが効きません", "critical"),
        ("前に事故したことがあって、今ボンネットから煙が出てる", "critical"),
        # v22 taught: a leaflet's campaign, a team's ace, a computer that overheats, smoke from the toaster, a
        # colleague as the brake (ブレーキ役, a frame by meaning only), stalling in the driving test
        ("チラシに載ってた「オーバーヒート防止キャンペーン」って何ですか", "medium"),
        ("オーバーヒート防止キャンペーンで点検してもらった帰りに、ボンネットから湯気", "critical"),
        ("うちのエースが後半オーバーヒートして退場しよったわ", "medium"),
        ("エースが運転する車でブレーキが効かなくなった", "critical"),
        ("パソコンがオーバーヒートして落ちちゃった", "medium"),
        ("スマホがオーバーヒートしてナビが落ちた、ついでにボンネットから煙が出てる", "critical"),
        ("朝トースターからパン焦げた煙が出て火災報知器鳴ったw", "medium"),
        ("トースターから煙が出たと思ったら、車の下から火が出てた", "critical"),
        ("免許の技能試験でエンストしまくって落ちた", "medium"),
        ("教習中にブレーキが効かなくなった", "critical"),
        # v23 taught: a health check's warning, a bicycle after a comma, a leak that stopped after the repair, a
        # warning light's colours asked about, a smell that went as the shop said, a wallet that smokes, a dream
        # (夢の中), a test failed by a stall, a car driven when young
        ("健康診断で肝臓の数値に警告ランプ点いとるって言われた", "medium"),
        ("健康診断で引っかかった。あと車の赤い警告灯が点いたまま消えない", "critical"),
        ("娘の自転車、ブレーキがキーキー鳴るし後輪もパンクしちゃって", "medium"),
        ("娘を自転車、じゃなくて車で送ってたらブレーキが効かない", "critical"),
        ("先月オイル漏れ直してもらってから、駐車場のシミも一滴も出なくなりました", "medium"),
        ("オイル漏れ直してもらってから、漏れは出なくなりましたが、今朝ブレーキが効かない", "critical"),
        ("メーターの警告灯って、赤と黄色でどう違うんですか？", "medium"),
        ("赤い警告灯が点いた、黄色とどう違うの？", "critical"),
        (
            "「最初の数日は少し焦げたにおいがします」って言われたとおり、少しにおってたけど今日はもうしません",
            "medium",
        ),
        ("わいの財布から煙出たで", "medium"),
        ("財布を車に置いてたらボンネットから煙が出た", "critical"),
        ("正常な音で安心したけど、さっきからボンネットから煙が出てる", "critical"),
        ("夢の中で自分の車が燃えてて、目が覚めたら汗びっしょり", "medium"),
        ("夢の中みたいに、ブレーキが効かない", "critical"),
        ("教習所の検定、坂道発進でエンストして一発アウトだった", "medium"),
        ("検定中にブレーキが効かなくなった", "critical"),
        ("若い頃乗ってたボロのワゴン、冬になるとしょっちゅうエンストしてた", "medium"),
        ("若い頃乗ってた車と同じで、ブレーキが効かない", "critical"),
        # v24 taught: a phone line that is "punctured", a section head who overheats in a meeting, a toaster's burnt
        # smell, an idiom (尻に火がつく), a fishing reel's brake, a lawn mower that stalls, an exam's quoted question
        ("電話全然つながらないんですけど、回線パンクしてます？", "medium"),
        ("回線パンクしてるみたいで電話つながらない、タイヤがパンクして動けない", "high"),
        ("うちの課長が今朝の会議で完全にオーバーヒートしてました笑", "medium"),
        ("課長が乗ってる社用車が今朝完全にオーバーヒートしてる", "critical"),
        ("台所のトースターから焦げ臭いにおいがするんですけど…って、ここ車屋さんでしたね", "medium"),
        ("トースターから焦げ臭いにおいがすると思ったら、ボンネットから煙が出てた", "critical"),
        ("車検切れまであと3日で尻に火がついてます…一番早くていつ入れられますか？", "medium"),
        ("尻に火がついてるんです、エンジンから火が出た", "critical"),
        ("釣りに行ったらリールのブレーキが効かなくて糸ぐちゃぐちゃになりました", "medium"),
        ("リールのブレーキが効かないと思ってたら、車のブレーキも効かない", "critical"),
        ("実家の芝刈り機がすぐエンストするんですけど、見てもらえますか？", "medium"),
        ("芝刈り機を積んで走ってたらエンストした", "critical"),
        ("芝刈り機がエンストして、車のボンネットから煙", "critical"),
        ("試験勉強中です。「オーバーヒートの主な原因を3つ」って問題、答え合わせしてもらえますか", "medium"),
        ("「オーバーヒートの原因」って問題を解いてたら、車の水温計が振り切って湯気が出てきた", "critical"),
        # v25 taught: the warning lamps' bulb check at start-up, a friend's boat
        ("エンジンかけたら警告灯が一斉についてびっくりしたけど、すぐ消えました", "medium"),
        ("警告灯が一斉についてすぐ消えたけど、ブレーキが効かない", "critical"),
        ("油圧のランプが一瞬ついてすぐ消えた", "critical"),  # a lamp flashing on its own: no bulb check
        ("友達のボートのエンジンがオーバーヒートしたらしいんですけど、船外機って見れますか", "medium"),
        ("ボートのエンジンがオーバーヒートして、車のほうも水温計が振り切ってる", "critical"),
        ("ボートを牽引してたらエンジンがオーバーヒートした", "critical"),
        # v26 taught: the old man next door (じっちゃ) and his truck, unless one drives it; a danger heard of in
        # general (「…ってよく聞くけど」), unless it is here now
        ("隣のじっちゃの軽トラ、エンストばっかしてっけど、おらの車はなんともねぇ", "medium"),
        ("隣のじっちゃの軽トラを借りて走ってたらエンストした", "critical"),
        ("隣のおじさんの車で送ってもらってたらエンストした", "high"),  # uncapped: the rule's own level
        ("雪道だとブレーキが効かないってよく聞くけど、スタッドレスだとどれくらい違うんですか", "medium"),
        ("雪道だとブレーキが効かないってよく聞くけど、今まさに効かない", "critical"),
        # v27 taught: smoke's smell soaked into the seats (a campfire, a previous owner's cigarettes)
        ("週末キャンプで焚き火しすぎて、車の中まで煙の匂いが染み付いちゃいました", "medium"),
        ("前のオーナーがタバコを吸ってたみたいで煙の臭いがシートに残ってます", "medium"),
        ("煙の臭いが残ってると思ったら、ボンネットから煙が出てた", "critical"),
        ("車は急に止まれないって言うけど、今ブレーキが効かない", "critical"),
        # v28 taught: a friend's puncture long ago remembered, a batting line "on fire", how to use a puncture kit,
        # a forklift's steering at work; and a dream only when one was had (not 「夢を見てるみたい」 of a danger now)
        ("友達が10年くらい前に高速でパンクした話を思い出して、スペアタイヤがあるか気になった", "medium"),
        ("友達がパンクした話を思い出してたら、うちの車もパンクした", "high"),
        ("息子のチーム、打線に火がついて止まらない！土曜って営業してます？", "medium"),
        ("打線に火がついて盛り上がってたら、帰りにブレーキが効かなくなった", "critical"),
        ("打線に火がついて止まらない、ボンネットから煙も止まらない", "critical"),
        ("赤ちゃんが火がついたように泣き出して焦った、チャイルドシートの付け方を教えて", "medium"),
        ("赤ちゃんが火がついたように泣いてて、ボンネットから煙が出てる", "critical"),
        (
            "パンク修理キットの使い方を今のうちに教えてもらえますか？",
            "low",
        ),  # the kit names no puncture (v38)
        ("パンクしたのでパンク修理キットの使い方を教えて", "high"),
        ("パンク修理キットの使い方を教えて。さっきパンクした", "high"),
        ("職場のフォークリフトのハンドルがガタガタなんですが、見てもらえますか？", "medium"),
        ("フォークリフトのブレーキが効かないと思ってたら、車のブレーキも効かない", "critical"),
        ("悪い夢を見てるみたい。ブレーキが効かない！", "critical"),
        ("夢であってほしい、ブレーキが効かない", "critical"),
        ("ゆめを みてるみたい ぶれーきが きかない", "critical"),
        ("車が燃える夢を見た直後に本当にボンネットから煙が出てきた", "critical"),
        ("ブレーキが効かなくなったと思ったら夢でした", "medium"),
        # v29 taught: a quoted line of a song, a team that "stalled", tempura's burnt smell, a manager whose brakes
        # fail once he starts talking, a head that smokes (and a memory told at the end: below), 「エンストじゃないよね？」 (a
        # denial asked for, not a stall)
        ("「ブレーキが壊れた」みたいな歌詞の曲があったと思うんだけど、タイトル思い出せない", "medium"),
        ("「ブレーキが壊れた」みたいな音がして、ブレーキが効かない", "critical"),
        ("昨日の試合、うちのチーム後半は完全にエンストしてたなあ", "medium"),
        ("チームの車で移動中にエンストした", "high"),
        ("天ぷら揚げてたら油が熱くなりすぎて焦げ臭くなった", "medium"),
        ("天ぷら揚げてたら、車のボンネットから煙が出てきた", "critical"),
        ("うちの部長、一度しゃべり出すとブレーキが効かないんですよね", "medium"),
        ("運転し出すとブレーキが効かない", "critical"),
        ("仕事が立て込んでて頭から煙が出そう。車検は来月で間に合いますよね？", "medium"),
        ("頭から湯気が出そうなくらい焦ってる、ボンネットから湯気が出てる", "critical"),
        ("ブレーキが効かない！最悪の思い出になりそう", "critical"),
        ("アイドリングストップで信号のたびにエンジン止まるけど、これってエンストじゃないよね？", "low"),
        ("エンストした、故障じゃないよね？", "high"),
        ("エンストじゃないですか、これ。信号で止まったら再始動しない", "high"),
        # v30 taught: a brake that barely stops the car (「…ほとんど止まらない」; its squeal that does not stop is no
        # failure), idle stop at the lights, a stock "on fire", a go-kart, a remark about a person quoted, a
        # grandfather's story of old, an extinguisher 「火が出た時用」; and a car one used to drive, driven now
        (
            "さっきからブレーキ踏むとガリガリって金属こすれる音して、ほとんど止まらない。今路肩です",
            "critical",
        ),
        ("ブレーキ踏んでもなかなか止まらない", "critical"),
        ("ブレーキの鳴きがなかなか止まらない", "low"),
        ("ブレーキかけるたびにキーキーいうのが全然止まらない", "high"),
        ("アイドリングストップで信号のたびにエンストしたみたいに止まるけど、これ仕様ですよね", "low"),
        ("アイドリングストップで止まったあと再始動しなくてエンストした", "high"),
        ("株価が爆上がりでブレーキが効かない", "medium"),
        ("株価が気になって運転してたらブレーキが効かない", "critical"),
        ("株式会社の社用車でブレーキが効かない", "critical"),
        ("遊園地のゴーカート、ブレーキが効かなくて笑った", "medium"),
        ("ゴーカートの帰りに車のハンドルが重くて全然回らない", "critical"),
        ("上司に「お前の企画はブレーキが効かない車だ」って言われて凹んでる", "medium"),
        ("上司に「お前の車、ブレーキ効かないぞ」って言われて踏んだら本当に効かない", "critical"),
        ("祖父が昔、峠でブレーキが効かなくなった話をよくしてた。今の車でもそういうことある？", "medium"),
        ("祖父が昔の話をしてたら、ボンネットから煙が出てきた", "critical"),
        ("車に積む消火器を買いたいんですが、火が出た時用のおすすめサイズってありますか？", "low"),
        ("火が出た時用の消火器を積んでたけど、今本当に火が出てる", "critical"),
        ("祖父が昔乗ってた車で、今ブレーキが効かない", "critical"),
        # idioms that hold a danger's word cover no danger told after them in the sentence (they were medium)
        ("うちの息子はブレーキが効かない性格で、今ブレーキが効かない", "critical"),
        ("部長はしゃべり出すとブレーキが効かない、今ボンネットから煙", "critical"),
        ("課長が朝からオーバーヒートしてて、ボンネットから煙が出てる", "critical"),
        ("上司が今日も朝からオーバーヒートしててブレーキ効かない感じ、会社行きたくない", "medium"),
        ("エースがオーバーヒートして、ボンネットから煙", "critical"),
        ("部長がブレーキ役で、ブレーキが効かない", "critical"),
        ("家計が火の車、ボンネットから煙が出てる", "critical"),
        # v31 taught: a body that overheats, a feeling without brakes, a joke said so at the end, talk that does not
        # stop, grill smoke in one's clothes; and the same words about the car
        ("サウナ入りすぎて体がオーバーヒートしたわ", "medium"),
        ("体がオーバーヒートしそう、車もオーバーヒートして湯気が出てる", "critical"),
        ("私の恋はブレーキが効かない…なんてね", "medium"),
        ("二人の愛はブレーキの効かない車みたい", "medium"),
        ("恋はブレーキが効かないって言うけど、今本当にブレーキが効かない", "critical"),
        ("今ブレーキが効かない、なんてね、じゃなくて本当に！", "critical"),
        ("うちの上司、ブレーキ壊れてるんか思うくらい喋り止まらんねん", "medium"),
        ("食欲が止まらないけど、今ボンネットから煙が出てる", "critical"),
        ("今日の焼肉、煙すごくて服がくさい", "medium"),
        ("焼肉の煙で服が臭いけど、ボンネットからも煙が出てる", "critical"),
        ("テレビ見て笑ってたら車の下から火が出てるって言われた", "critical"),
        ("友達の前の車を借りてるんだけど、今ブレーキが効かない", "critical"),
        ("ハンドルロックってどういう仕組み？走ってたら急にハンドルが回らなくなった", "critical"),
        ("ブレーキのきかない暴走特急みたいに車が止まらない！", "critical"),
        # the car rolling back on a hill (a hill-hold that fails) is seen today
        ("坂道で一瞬止まってくれる機能、あれが効かなくて車が下がってくる", "high"),
        ("サンバイザーがすぐダラーンって下がってくる", "low"),
        # v32 taught: the bulb check at start-up, a denial in kana, a list denied with 全く, a mind that stalls,
        # spending without brakes, a boss whose brakes fail when angry; and the same words about the car
        ("エンジンかける時にメーターの警告灯が全部一瞬つくのって正常ですか？", "low"),
        ("警告灯が全部一瞬ついて、そのあと赤いランプが消えない", "critical"),
        ("けむりはでてないよ ただせんしゃしたいだけ", "low"),
        ("けむりがでてる", "critical"),
        ("煙も臭いも全くないし警告灯もついてないけど、オイル交換の時期聞きたい", "low"),
        ("煙も臭いも全くないけど、ブレーキが効かない", "critical"),
        ("カープが負けてわしの心がエンストしとるんじゃ", "medium"),
        ("心がエンストしてるけど、車もエンストして動かない", "high"),
        ("嫁の買い物にブレーキ効かへんねん、どないしたらええ笑", "medium"),
        ("嫁の買い物にブレーキ効かへんけど、車のブレーキも効かへん", "critical"),
        ("うちの上司、怒るとブレーキ効かなくなるタイプで困ってる笑", "medium"),
        ("怒るとブレーキ効かなくなるタイプの上司を乗せてたら、ブレーキが効かない", "critical"),
        ("昔話で聞いたのと同じで、今ブレーキが効かない", "critical"),
        ("昔の車の話らしいけど、今ハンドルが重くて回らない", "critical"),
        ("犬が飛び出してきてブレーキ踏んだけど止まらない", "critical"),
        ("猫をよけたらブレーキが効かなくなった", "critical"),
        # v33 taught: the same frames a little wider (talk that does not stop 「…だしたら」, legs that overheat, a stock
        # whose brakes broke, a dog whose brakes fail, a model car, what a word means); and the same words about the car
        ("学校の文化祭の出し物で、煙が出る車の模型を作りたい", "medium"),
        ("模型みたいにボンネットから煙が出てる", "critical"),
        ("うちのオカン喋りだしたら止まらへんねん、ブレーキ壊れとるわ", "medium"),
        ("うちのオカン喋りだしたら止まらへんけど、今ブレーキが効かない", "critical"),
        ("息子のサッカー、後半で足がオーバーヒートしとったばい", "medium"),
        ("足がオーバーヒートしそうなくらい歩いた、車もオーバーヒートして湯気", "critical"),
        ("アニメで主人公の車がエンストしてたけど、実際エンストってどういう状態？", "medium"),
        ("エンストってどういう状態？今まさに走行中に止まった", "high"),
        ("株価がブレーキ壊れたみたいに下がり続けてる📉", "medium"),
        ("株価が気になって運転してたらブレーキ壊れたみたいに止まらない", "critical"),
        ("犬が興奮してブレーキが効かない、散歩で引っ張られっぱなし", "medium"),
        ("犬が興奮して暴れてたら、ブレーキが効かなくなった", "critical"),
        # v34 taught: a prank show's staged smoke, a school project, a danger that never happened (in kana), whether a
        # stall can happen at all; and the same words about the car
        ("テレビのドッキリで車のボンネットから煙が出る演出をしてた", "medium"),
        ("ドッキリかと思ったら本当にボンネットから煙が出てる", "critical"),
        ("子どもの自由研究で、エンジンの中でガソリンが燃えている仕組みを調べています", "medium"),
        ("自由研究の帰りにエンジンから火が出た", "critical"),
        ("えんじんからけむりがでたことはいちどもないです", "low"),
        ("けむりがでたことないのに、いまえんじんからけむりがでてる", "critical"),
        ("AT車でもエンストってすることあるんですか？", "low"),
        ("AT車なのに信号待ちでエンストすることがあります", "high"),
        # v35 taught: a kitchen full of smoke and its alarm, the writer overheating, a museum and the cars of old,
        # lightning on a pole, a denial asked (「発火したりしないんですか」), dust like smoke from the truck ahead; and the
        # same words about the car
        ("昨日魚を焼いてたらキッチンが煙だらけになって火災報知器が鳴りました", "medium"),
        ("火災報知器みたいな音がして、ボンネットから煙が出てる", "critical"),
        ("キッチンから戻ったら、車のボンネットから煙が出てる", "critical"),
        ("今日暑すぎて私のほうがオーバーヒートしそうです", "medium"),
        ("私の車がオーバーヒートして湯気が出てる", "critical"),
        ("先週自動車博物館で、昔の車はすぐオーバーヒートしてたって説明を読みました", "medium"),
        ("博物館の帰りにオーバーヒートして湯気が出た", "critical"),
        ("昔の車だからか、ブレーキが効かない", "critical"),
        ("昨日の雷が近所の電柱に落ちて火花が散って焦りました", "medium"),
        ("雷が鳴ってたら、ボンネットから火花が散ってる", "critical"),
        ("電気自動車のバッテリーって、スマホみたいに発火したりしないんですか？", "low"),
        ("バッテリーのあたりから発火したりして、煙が出てる", "critical"),
        ("前を走ってた工事のトラックから煙みたいな粉が舞ってきた", "medium"),
        ("煙みたいなにおいがして、ボンネットから煙が出てる", "critical"),
        # v36 taught: denials (「…とかではない」「…ことって普通はない」), whether it can happen (「…効かなくなるんですか？」
        # 「エンストしにくい」), a child who asks, a go-kart, driving school days, a joke said first and a loan on fire,
        # riding a bicycle, a rental already returned; and the same words about the car
        ("煙が出てるとかではないです！", "low"),
        ("煙が出てるとかじゃなくて、火が出てる", "critical"),
        ("普通はないことだけど、マフラーから火が出てる", "critical"),
        ("推理小説で、本当にブレーキって効かなくなるんですか？", "low"),
        ("走ってるとブレーキが効かなくなるんですが、今も効かない", "critical"),
        ("今の車ってエンストしにくいって本当ですか？", "low"),
        ("エンストしにくい車なのに、今日走行中にエンストした", "critical"),
        ("5歳の息子が「パパの車も火をふくの？」と聞いてきます", "low"),
        ("息子が「煙が出てる」って言うから見たら、ボンネットから煙が出てた", "critical"),
        ("遊園地のゴーカートでハンドルを取られてコースアウトしました", "medium"),
        ("ゴーカートの帰りに高速でハンドルを取られて怖い、今も揺れる", "critical"),
        ("普段の車なのにブレーキが効かない", "critical"),
        ("教習所時代、坂道発進でエンストばっかりして泣いた", "medium"),
        ("冗談ですけど、ローン残高のほうが燃えてます", "medium"),
        ("冗談じゃなくて、ボンネットから火が出てる", "critical"),
        ("ロードバイクで峠を下っていたら、ブレーキが効かなくなりかけて冷や汗をかきました", "medium"),
        ("自転車で来た友達を乗せて走ってたら、車のブレーキが効かない", "critical"),
        ("旅行先のレンタカーでエンジンが止まらないってパニックになりました。もう返したんですが", "medium"),
        ("レンタカーのブレーキが効かない、今走ってる", "critical"),
        # v37 taught: water coming in through the floor on a flooded road (its one missed critical phrasing; rain
        # through a seal is no flood), a frame followed by the writer's own car now, a feeling without brakes said
        # politely, chatter said to be about something else, public transport; and the same words about the car
        ("雨の日に足元に水が入ってくる", "low"),
        ("冠水した道に入っちゃって床から水がどんどん入ってきてる", "critical"),
        (
            "ニュースで冠水した道路の映像見てたけど他人事じゃなかった、いま私の車が水の中で床から水がどんどん入ってきてる",
            "critical",
        ),
        ("映画でブレーキが効かなくなるシーンを見た、いま私の車もブレーキが効かない", "critical"),
        ("ダイエット中なのに食欲のブレーキが全然効きません", "medium"),
        ("食欲はあるけど、ブレーキが全然効きません", "critical"),
        ("車とは関係ない愚痴ですが、上司が毎日オーバーヒートしてます", "medium"),
        ("車とは関係ないと思うけど、ボンネットから煙が出てる", "critical"),
        ("今朝乗った路線バスが煙を出して止まってしまい、乗り換えになりました", "medium"),
        ("バスを降りて車に乗ったら、ボンネットから煙が出てる", "critical"),
        ("送迎バスを運転中、ブレーキが効かなくなってきた", "critical"),
        # v38 taught: a steering wheel that seizes and a car that pushes forward on its own (its two missed critical
        # phrasings), 「まさか自分が」 and 「今エンジンが」 after a frame, a racing machine, a bicycle's puncture and the
        # repair kit, a health check, last year's trouble; and the same words about the car
        ("ハンドルが急に固まって回らんのじゃ、今運転しよるけえ、どうしたらええんか教えて", "critical"),
        ("ハンドルが固まって回らない", "critical"),
        (
            "ニュースで急発進の事故よく見るけど、まさか自分がと思ってた。今エンジンが勝手に吹け上がって車が前に出ようと"
            "してて、ブレーキ踏みっぱなしで耐えてる。",
            "critical",
        ),
        ("F1見てたらタイヤがバーストしてマシンが炎上してた", "medium"),
        ("番組見てたら、ボンネットから煙が出てきた", "critical"),
        ("子どもの自転車がパンクしたんですけど、車に積んであるパンク修理キットって使えますか？", "medium"),
        ("パンク修理キットの使い方を教えて", "low"),
        ("パンク修理キットで直したけど、またタイヤがパンクした", "high"),
        ("健康診断で血圧の警告灯が点灯してるって医者に言われました", "medium"),
        ("健康診断の帰りに、メーターの赤い警告灯が点灯した", "critical"),
        ("去年タイヤがパンクしたときはロードサービスに助けてもらいました", "medium"),
        ("去年パンクしたときは助かったけど、今回はブレーキが効かない", "critical"),
        # v39 taught: a danger said never to happen (「…効かないなんてことも一度もない」); said of the past before now, or
        # asked, it still counts
        (
            "うちの車、もう10年乗ってるけど一度もエンストしたことないし、ブレーキが効かないなんてことも一度もない",
            "low",
        ),
        ("煙が出るなんてことは今までない", "low"),
        ("ブレーキが効かないなんてことは一度もなかったのに、今日急に効かない", "critical"),
        ("煙が出るなんてことないのに、今出てる", "critical"),
        ("ブレーキが効かないなんてことある？今まさに効かない", "critical"),
        # v40 taught: campfire smoke in one's eyes, said in dialect; and smoke from the car at the campfire
        ("キャンプで焚き火しよったら煙がえらい目にしみたぜよ", "medium"),
        ("焚き火しとったら、ボンネットから煙が出て目にしみる", "critical"),
        # v41 taught: 「今…、俺の車の」 after a film (its one missed critical phrasing), smoke it only looked like, a song's
        # title, a nickname, how a leak is told apart; and the same words about the car now
        (
            "昨日観た映画でブレーキ壊れるシーンあって笑ってたけど今笑えない、俺の車のブレーキが今まさに効いてない、"
            "坂を下ってる途中",
            "critical",
        ),
        ("映画でブレーキが効かなくなるシーンがあって、今思い出しても怖い", "medium"),
        ("炊飯器の蒸気がすごくて一瞬煙かと思ったw", "medium"),
        ("煙かと思ったら本当に煙が出てた", "critical"),
        ("ドライブ用のプレイリスト作ってる。締めの一曲はやっぱり「炎」", "medium"),
        ("好きな曲は「炎」だけど、今ボンネットから炎が出てる", "critical"),
        ("愛車は今日も絶好調、ちなみに会社での俺のあだ名はオーバーヒート", "medium"),
        ("俺のあだ名はオーバーヒートやけど、今は車がオーバーヒートして湯気出とる", "critical"),
        ("ガソリン漏れって臭いでわかるもんなん?うちのは漏れてへんけど知っときたくて", "low"),
        ("ガソリン漏れって臭いでわかるっていうけど、今すごい臭いで車の下からガソリンが垂れてる", "critical"),
        ("じいちゃんが昔タイヤ外れた話しとったけど、今うちの車のタイヤがぐらぐらして外れそう", "critical"),
        # a wheel that came off while driving is critical by rule; the same words about a toy or a game are not
        ("走行中にタイヤが外れた", "critical"),
        ("今タイヤが外れた！", "critical"),
        ("子供のラジコン、走ってたらタイヤが取れた", "medium"),
        ("ゲームで走行中にタイヤが外れる演出あった", "low"),
        ("息子のミニカーのタイヤが外れた。瞬間接着剤でいける？", "low"),
        # v42 taught: smoke denied with なんて; smoke that would be frightening (「…出たら怖い」); nothing wrong since the
        # tyres were changed, in Tohoku dialect (「替えてがらなんともね」); and the same words about a danger now
        ("煙なんて出てないし警告灯もついてないけど、新車の匂いっていつまで続くの", "low"),
        ("煙なんか出てません", "low"),
        ("煙なんて出てないと思ってたら、ボンネットから煙が出てきた", "critical"),
        ("エンジンルームから煙出たら怖いけぇJAF入っとこう思うんじゃけど年会費なんぼ？", "low"),
        ("エンジンルームから煙が出て怖い", "critical"),
        ("ボンネットから煙が出たらすぐ止めました、まだ煙が出てます", "critical"),
        ("去年の冬ブレーキ効かねぐて滑ったっけ、スタッドレスさ替えてがらなんともね", "medium"),
        ("ブレーキ効かなくなって修理してもらってからは何ともない", "medium"),
        ("スタッドレスに替えてから、ブレーキが効かない", "critical"),
        ("ブレーキ交換してからなんともないけど、今度はハンドルが重くて回らない", "critical"),
        # v43 taught: a photo that caused a stir on social media, a dream seen every night, whether a real car smokes
        # like the one in a game; and the same words about the car now
        ("インスタに上げた愛車の写真、痛車すぎて炎上したw", "medium"),
        ("インスタに上げようと写真撮ってたら、ボンネットから火が出てきた", "critical"),
        ("ブレーキ踏んでも止まらない夢を毎晩見る…運転向いてないのかな", "medium"),
        ("ブレーキ踏んでも止まらない、夢じゃない", "critical"),
        ("グランツーリスモでエンジンがオーバーヒートしたんだけど、実車でもあんな風に白煙出るの？", "medium"),
        ("現実でもあんな風にブレーキが効かなくなるの？", "low"),
        ("ゲームかと思ったけど、実車でも白煙が出てる", "critical"),
        # v44 taught: smoke denied in Kagoshima dialect (「煙じゃなかで灰じゃっで」), a head that overheats over baseball;
        # the fire rule reads 「火も出てる」 and a denial reads 「煙も火も出てない」; and the same words about the car now
        ("桜島の灰で車が真っ白じゃっど。煙じゃなかで灰じゃっで大丈夫。洗車はどげんすればよか？", "low"),
        ("煙じゃなくて湯気です", "low"),
        ("湯気じゃない、煙が出てる", "critical"),
        ("ただの煙じゃない、火も出てる", "critical"),
        ("煙も火も出てない", "low"),
        ("煙も火も出てる", "critical"),
        ("カープが負けてわしの頭はオーバーヒートじゃ。ところでナビのテレビで野球中継って映るん？", "medium"),
        ("頭がオーバーヒートしそう、しかも今エンジンもオーバーヒートしてる", "critical"),
        # v45 taught: a danger said not to be about the car, in the same sentence or the next (「車の話でねぇけど」,
        # 「車とは関係ないけど」); a novel's scene being written; the manual's wording quoted and asked about; and the same
        # words about the car now (a danger after 「…けど、」, or the owner only thinking it unrelated)
        ("ストーブで餅焦がして煙すごかった、車の話でねぇけど笑", "medium"),
        ("鍋から煙が出て焦げ臭かった。車とは関係ないけど、車用の消火器ってある？", "medium"),
        ("車とは関係ないけど、ブレーキが効かない", "critical"),
        ("車の話じゃないけど、さっきから車内が焦げ臭い", "critical"),
        ("ボンネットから煙が出てる、車とは関係ないと思うけど", "critical"),
        ("車とは関係ないかもしれないけど焦げ臭い", "critical"),
        ("小説書いてて、主人公の車のハンドルが効かなくなる場面を描写したい", "medium"),
        ("漫画を描いていたら急にブレーキが効かなくなった", "critical"),
        ("小説を書きに行く途中でブレーキが効かなくなった", "critical"),
        ("取説に「エンジンから煙が出た場合」という記載がありますが、どんな状況ですか", "low"),
        ("「ブレーキが効かない」って表示が出てる", "critical"),
        # v46 taught: riding in a friend's car now is no one else's car; a stranger's car (「知らない車」) is; brakes on a
        # diet; barbecue smoke that was 「すごかった」; a dog shaking in the car; and the same words about the car now
        ("友達の車に乗ってるんだけどブレーキが効かないって、まだ走ってる", "critical"),
        ("友達の車がブレーキ効かなくなったらしい", "medium"),
        ("帰り道に知らない車が路肩で煙出してたの見た。通報したほうがいいの？", "medium"),
        ("知らない車に追突されてボンネットから煙が出てる", "critical"),
        ("近所の人に「車から煙出てるよ」って教えてもらった", "critical"),
        ("ダイエットのブレーキ効かんくてまた太ったわ", "medium"),
        ("ダイエット中だけど、ブレーキが効かない", "critical"),
        ("近所の人が車の横でバーベキューしてて煙すごかった。車に匂いつくかな", "medium"),
        ("バーベキューしてたら車から煙がすごい", "critical"),
        ("うちの犬が車に乗ると震えてる。車酔いかな", "low"),
        ("犬が震えてる、車もガタガタ揺れてる", "high"),
        ("子どもが吐きそうになってる、車内が排気ガス臭い", "critical"),
        # v47 taught: a hypothetical after 「…で」 (「雪道でもし…たら」); the manual's wording quoted with 「…」とあります;
        # a call asked for when the shop is done. Found beside them: 「もし」 inside 「でもして」 or 「もしかして」 is no
        # hypothetical, and a brake that 「効いてない」 is a brake that does not work
        ("雪道でもしスリップして止まんなくなったらどうすればいい？", "low"),
        ("点検でもしてもらおうかな、ブレーキが効かない", "critical"),
        ("もしかして、ボンネットから煙出てる？", "critical"),
        ("煙も出たしパンクもした", "critical"),
        ("ブレーキが効いてない", "critical"),
        ("ブレーキ効いてへん！", "critical"),
        ("ブレーキはちゃんと効いてます", "low"),
        (
            "説明書に「ブレーキ警告灯が点灯したまま走行しないでください」とありますが、点滅も含まれますか",
            "medium",
        ),
        ("修理が終わったら電話ください。昼は仕事なので夜がいいです", "low"),
        ("修理が終わったらブレーキが効かなくなった", "critical"),
        # v48 taught: a repair the shop did, told politely (「調整していただきました」); whether a wheel nut can work loose
        # (「緩むことあんの？」); how a fuel leak is noticed. Found beside them: a frame in one sentence covered a danger
        # in the next that turns to today (「直りました。今朝…煙が出た」 was medium); and the same words about the car now
        ("先週ハンドルが取られる症状で入庫して、調整していただきました。今はまっすぐ走っています", "medium"),
        ("調整していただきました。ボンネットから煙が出てる", "critical"),
        ("タイヤ交換してもらった帰り、ブレーキが効かなくなった", "critical"),
        ("ゲームでタイヤ外れた。現実でもホイールナットって緩むことあんの？", "low"),
        ("ホイールナットが緩むことがある。今も緩んでる", "critical"),
        ("燃料漏れってどうやって気づくの？", "low"),
        ("燃料が漏れてる", "critical"),
        ("直りました。今朝ボンネットから煙が出た", "critical"),
        ("修理してもらいました。今日またボンネットから煙が出てる", "critical"),
        ("ニュースで見た。高速道路で車が燃えていた", "medium"),
        # a brake that works less and less (found leave-one-set-out: v30's school bus was low by rule, and once v41 was
        # among the examples, low by meaning too); said never to happen, or as a hypothetical, it does not count
        ("生徒乗せたマイクロバスで送迎中、ブレーキの効きがどんどんなくなってきた、どうしたら", "critical"),
        ("ブレーキの効きが急に悪くなった", "critical"),
        ("ブレーキの効きが悪くなるなんてことは一度もない", "low"),
        ("もしブレーキの効きがなくなったらどうする？", "low"),
        # v49 taught: a danger only feared (「火が出るかと思って焦りました」「燃えてるのかと思いました」「壊れたかと思った」);
        # a person's brakes (「嫁のブレーキ…買い物が止まらへん」). Found beside them: real smoke followed by a feared fire
        # (「煙が出てて火事かと思った」) was medium, and steering too heavy to turn (「ハンドルが重くなってほとんど曲がれない」)
        # was low by rule; and the same words about the car now
        ("静電気でバチッときて、火が出るかと思って焦りました。静電気除去シートって効果あるの?", "medium"),
        ("車内のにおいがすごくて、何か燃えてるのかと思いました。これが新車のにおいなんですね", "medium"),
        ("急ブレーキ踏んだらペダルがガガガって震えて壊れたかと思った。普段は何ともないです", "medium"),
        ("湯気を煙かと思った", "medium"),
        ("ボンネットから煙が出てて火事かと思った", "critical"),
        ("ボンネットから煙が出てて、燃えてるかと思った", "critical"),
        ("ブレーキが効かないかと思った。今も止まりにくい", "critical"),
        ("さっきからハンドルが重くなって曲がれない、交差点で死ぬかと思った", "critical"),
        ("急ブレーキ踏んだら、後ろにぶつけられるかと思った。ブレーキが効かない", "critical"),
        ("うちの嫁のブレーキ、完全に壊れてるわ。買い物が止まらへん", "medium"),
        ("母のブレーキが効かない。買い物の帰り道で", "critical"),
        ("急にハンドルが重くなってほとんど曲がれない", "critical"),
        ("ハンドルが重たくなって回せない", "critical"),
        ("遊園地のゴーカート、ハンドルが重くて全然曲がらなかった笑 本物の方が楽だね", "medium"),
        # v50 taught: a cold exhaust's steam told at length (「…近所の人に火事かと思ったって言われました。しばらくすると消えます
        # が」), ash dancing like smoke in Kagoshima dialect (「煙んごつ舞いよっど」), a dog's sick whose smell does not come
        # out, what it turned out to be (「結局落ちてたホースだった」); and the same words about the car now
        (
            "冬の朝、マフラーから白い煙がもくもく出て、近所の人に火事かと思ったって言われました。"
            "しばらくすると消えますが、これは湯気ですか？",
            "low",
        ),
        ("冬の朝、マフラーから白い煙がもくもく出てて、しばらくしても消えません", "critical"),
        ("桜島の灰がボンネットに積もって、風で煙んごつ舞いよっど", "low"),
        ("ボンネットから煙が出て、灰が舞ってる", "critical"),
        ("犬が後ろの座席でゲーゲー吐いちゃって、拭いたけど臭いが全然取れません", "low"),
        ("犬が後ろの座席で吐いちゃって、車内が排気ガス臭い", "critical"),
        ("結局落ちてたホースだったさー。エンジンルームの掃除ってお願いできる？", "low"),
        ("結局オイル漏れだった", "critical"),
        # v51 taught: a boss without brakes whose meetings do not stop (「会議が止まらない」), smoke of a fireworks display
        # (「花火大会の煙がすごかった」), a diffuser's mist that looks like smoke; and the same words about the car now
        ("上司がブレーキの効かない人で、会議が止まらないのが悩み笑", "medium"),
        ("上司を乗せてたらブレーキが効かない、車が止まらない", "critical"),
        ("咳が止まらないし、ブレーキも効かない", "critical"),
        ("花火大会の煙がすごかったけん、車が灰だらけになっとるっちゃん", "medium"),
        ("花火の煙みたいなのがボンネットから出てる", "critical"),
        ("花火大会の帰り、ボンネットから煙が出てる", "critical"),
        ("アロマディフューザーのミストが煙みたいに見えるから、後ろの車に火事と思われないか心配", "medium"),
        ("ミストが煙みたいに見えるけど、ボンネットからも煙が出てる", "critical"),
        ("ミストが煙みたいに見える。火事と思われたら困るけど煙が出てる", "critical"),
        # ...and what it missed: power lost on a motorway (「アクセル踏んでも全然進まない…いま高速の走行車線」) is critical
        ("アクセル踏んでも全然進まないのに車体がガタガタ揺れてる。いま高速の走行車線", "critical"),
        ("高速で急にスピードが落ちた", "critical"),
        ("アクセル踏んでも加速しない", "high"),
        ("高速の上り坂でスピードが落ちるのは普通？", "low"),
        # v52 taught: a hypothetical told as 「もしもの話なんですけど」 and 「外れたらどう対処」, a cold exhaust's steam and
        # water that 「少し走るとなくなる」, a husband fired up for golf (「ゴルフに燃えてて」); and the same words about the
        # car now. Found beside them: a fire that spreads (「燃え移った」) and a hypothetical denied (「もしもの話じゃなくて」)
        # were low by rule
        ("もしもの話なんですけど、高速でタイヤが外れたらどう対処すればいいんですか？", "low"),
        ("走ってる最中にタイヤが外れた、どう対処すればいい？", "critical"),
        ("もしもの話じゃなくて、走ってる最中にタイヤが外れた", "critical"),  # was low: a hypothetical denied
        ("もしもじゃなくて本当に、ブレーキが効かない", "critical"),
        (
            "冬の朝エンジンかけるとマフラーから白い煙がもわもわ出て、水もポタポタ垂れてる。少し走るとなくなる",
            "low",
        ),
        ("冬の朝エンジンかけるとマフラーから白い煙がもわもわ出て、少し走ってもなくならない", "critical"),
        ("旦那が最近ゴルフに燃えてて、毎週末車出してる", "medium"),
        ("旦那が最近ゴルフに燃えてて、車からも煙が出てる", "critical"),
        ("隣の車の火が、うちの車に燃え移った", "critical"),
        ("恋が燃え上がってます笑", "low"),
        # ...and a door or a bonnet that opens while driving (23 critical examples, caught by meaning until v52's request
        # about a child lock showed that a request beside it made the judgement low)
        (
            "後ろのスライドドアが走ってる最中に勝手に開いた！チャイルドロックはどこで設定するんですか？",
            "critical",
        ),
        ("走行中にボンネットが浮いてバタバタしてる", "critical"),
        ("子どもが走行中にドア開けようとするので、チャイルドロックが外れないようにしたい", "low"),
        ("もし走行中にボンネットが開いたらどうすればいいんですか？", "low"),
        # v53 taught: 「ガタガタもしねぇ」 denies in Tohoku dialect; smoke of grilling saury in clothes worn into the car
        # (「その服のまま車乗ったら車内まで焦げ臭い」, its 「消臭」 no smell); the flame of love (「恋の炎」); a new car's
        # burning smell; and the same words about the car now. And what it missed: steering too heavy to make the turn
        # (「曲がりきれなかった」), and fumes told a sentence before a child's sickness, which a frame covered because the
        # frame's span began at the sentence end before it
        ("雪かきでバンパーに傷ついただけだ。ガタガタもしねぇし走るのは全然平気だべ", "low"),
        (
            "ガタガタもしねぇって思ってたら、今すげぇガタガタしてる",
            "high",
        ),  # its 「もしねぇ」 was a hypothetical's 「もし」
        ("もしね、ブレーキが効かなくなったらどうする？", "low"),
        ("昨日さんま焼いてたら部屋中煙だらけになって、その服のまま車乗ったら車内まで焦げ臭い", "medium"),
        ("さんま焼いてたら煙だらけになって、その服のまま車乗ったらエンジンから焦げ臭い", "critical"),
        ("焚き火で煙くさい服のまま乗ったら車内まで臭いついた、消臭ってやってもらえる?", "medium"),
        ("消臭剤を置いたのにボンネットから焦げ臭い", "critical"),
        ("恋の炎が燃え上がってるので週末ドライブです", "medium"),
        ("ボンネットから炎が上がってる", "critical"),
        ("納車したての新車なんですが、エンジンのほうから少し焼けたような匂いがします", "medium"),
        ("納車したての新車なんですが、エンジンから焦げ臭い匂いがして煙も出てる", "critical"),
        ("運転中にいきなりハンドルがめちゃくちゃ重くなって、交差点で曲がりきれなかった", "critical"),
        ("最近車内が排気ガスくさくて、頭がガンガンする。今日は子供も気持ち悪いって吐きそう", "critical"),
        ("ドライブ中、子供が気持ち悪いって吐きそうになった", "low"),
        # v54 taught: a windscreen cracked so that the driver cannot see ahead (「前がほとんど見えません」, a new critical
        # rule: 34 critical examples said it, with a bonnet flying up or wipers stopping in a downpour); a wife whose
        # brakes fail at the shopping mall; white exhaust on a cold morning that 「走ってるうちに消えました」; a gauge
        # watched ever since a past overheating; and the same words about the car now
        (
            "高速で前のトラックから石が飛んできて、フロントガラスのヒビがみるみる広がって、運転席の前が蜘蛛の巣みたいになって"
            "前がほとんど見えません",
            "critical",
        ),
        ("窓が曇って前が見えない、どうしたらいい？", "low"),
        ("前が見えないくらいの大雨でした", "low"),
        ("YouTubeで走行中にボンネットが開いて前が見えなくなる動画を見ました", "medium"),
        (
            "うちの嫁さん、ショッピングモール行くとブレーキが全然効かへんねんけど、そっちで点検してもらえる？w",
            "medium",
        ),
        ("嫁がショッピングモールに行く途中でブレーキが効かなくなった", "critical"),
        ("嫁さん、買い物に車で行くとブレーキが効かへん言うとる", "critical"),
        ("寒い朝、マフラーから白い煙がモクモク出てびっくりしたけど、走ってるうちに消えました", "low"),
        ("マフラーから白い煙、走ってるうちに消えるどころか増えてきた", "critical"),
        (
            "去年の夏にオーバーヒートして湯気が出たことがあってから、つい水温計ばかり見てしまいます。今はずっと真ん中です",
            "medium",
        ),
        ("去年オーバーヒートしたことがあって心配してたら、今日また水温計が赤まで上がった", "critical"),
        # v55's critical phrasings that only the judgement by meaning caught, each a kind of danger no rule read (twenty
        # critical examples said the same; nothing else moved): a parked car that rolls away (a new rule), a fire typed
        # in kana, wheels that do not follow the steering, a brake pedal that sinks slowly, an engine that dies in the
        # middle of an intersection or a level crossing, power that 「力抜けて」 on the motorway
        (
            "坂の駐車場でPに入れてサイドも引いたのに、エンジン切って降りたら車がじわじわ下がっていきました",
            "critical",
        ),
        ("Pに入れたけど車が動き出さないか心配", "low"),
        ("Pに入れてサイドブレーキを引いたのに車がガクンと少し動くのは普通ですか", "low"),
        ("くるまのしたから ひがでてる！！", "critical"),
        ("あさ ひがでてから でかけます", "low"),
        (
            "カーブでハンドル切ったらガクンってなって、そこからハンドル回してもタイヤの向きが変わらない",
            "critical",
        ),
        ("ブレーキを踏んでるとペダルがじわ〜っと奥に沈んでいく感じがあって", "critical"),
        ("アクセルペダルが床まで沈む", "low"),
        ("交差点のど真ん中でエンジンがいきなり止まってしもうて", "critical"),
        (
            "高速乗っとったら急にアクセル踏んでもスーッと力抜けてもうて、今40キロくらいしか出えへんねん",
            "critical",
        ),
        ("急にアクセル踏んでもスーッと力抜けたみたいに感じる", "low"),  # no motorway: not this rule
    ],
)
def test_the_same_words_about_this_car_now_keep_their_level(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


# How hard the car is to stop or steer, told after the danger (「ハンドルが急に重くて曲がりにくい」), is part of the danger;
# only a word that is hard to happen itself (「エンストしにくい」「オーバーヒートしづらい車種」) asks whether it can happen.
@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("ハンドルが急に重くて曲がりにくい", "critical"),
        ("ハンドルが急に重くなって回しにくい", "critical"),
        ("タイヤがグラグラして走りにくい", "critical"),
        ("今の車ってエンストしにくいって本当ですか？", "low"),
        ("最近の車はエンストが起きにくいそうですね", "low"),
        ("ブレーキが効かなくなりにくい仕組みってあるんですか", "low"),
        ("オーバーヒートしづらい車種はどれですか", "low"),
    ],
)
def test_hard_to_stop_or_steer_after_a_danger_is_the_danger(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


def test_every_critical_match_in_a_critical_example_counts() -> None:
    """In every phrasing labelled critical among the examples (which hold every example set), each match of a critical
    rule counts — the text from where it begins is one of from_each_danger's — and the text does not read as saying
    the car works: no match ends where what follows (「回らない」, 「止まりにくい」) reads as a denial or a question
    whether the danger can happen. (A critical phrasing that denies one danger and reports another would be the
    exception to list here; none of the sets has one.) The one exception: a rule whose `unless` names a normal
    behaviour in the text does not count (v56's windscreen fogged white from inside 「前なんも見えへん」 beside a sweet
    smell: fog is `view_lost`'s normal behaviour), when another critical rule finds the text critical."""
    levels = json.loads(EXEMPLARS_FILE.read_text(encoding="utf-8"))["levels"]
    not_counted = []
    for text in levels["critical"]:
        normalized = normalize_symptom(text)
        tails = set(from_each_danger(text))
        for rule in CRITICAL_RULES:
            matches = list(rule.pattern.finditer(normalized))
            if matches and rule.unless is not None and rule.unless.search(normalized):
                assert keyword_urgency_check(text).level == "critical", text
                continue
            not_counted += [(text, m.group()) for m in matches if normalized[m.start() :] not in tails]
    assert len(levels["critical"]) > 1100
    assert not_counted == []
    assert [text for text in levels["critical"] if says_it_works(text)] == []


# Where or when something happened, told with a word the harmless frames also use (a film, a friend, a toy, a
# preparation, 快適, もしもの時): none of it makes the danger that follows a story.
PLACES_AND_TIMES = [
    "映画館の駐車場で",
    "ニュースを聞きながら走ってたら",
    "友達の家に向かう途中で",
    "快適に走ってたら",
    "買い物のために出かけたら",
    "キャンプの準備をしてたら",
    "教習所の帰りに",
    "近所のスーパーで",
    "おもちゃ屋に寄ったら",
    "ゲームセンターの駐車場で",
    "試験勉強の帰りに",
    "隣の家に行こうとしたら",
    "前を走ってたら",
    "準備万端で出発したのに",
    "ドラマの撮影現場の近くで",
    "動画を撮りながら走ってたら",
    "修理から戻ってきたばかりなのに",
    "夢かと思ったけど、",
    "もしもの時のために保険に入ってるけど、今",
    "もしもって思ってたけど、今本当に",
    "バーベキューに行く途中で",
    "知り合いの車屋さんに行く途中で",
    "新車で快調だったのに",
    "漫画喫茶の駐車場で",
    "マリオカートみたいなカーブで",  # a game as a likeness, not the story
]
DANGERS = [
    "ブレーキが効かなくなった",
    "ボンネットから煙が出てきた",
    "エンジンから火が出た",
    "ハンドルが効かなくなった",
    "車の下にガソリンが漏れてた",
    "タイヤが外れそうにガタガタする",
    "赤い油圧のランプが点いた",
    "水温計が振り切って湯気が出てきた",
]


def _not_critical(texts: list[str], judge: UrgencyJudge) -> list[str]:
    """The texts the rules or the fast path judge below critical."""
    return [
        text
        for text in texts
        if keyword_urgency_check(text).level != "critical"
        or fast_urgency_check(text, judge).level != "critical"
    ]


# A frame's own word, then a step of the story (「…たら」「…帰りに」「…翌日に」「…のに」), then the danger.
AFTER_A_STEP = [
    "ラジコンのコントローラーを探してたら",
    "トミカ博の帰りに",
    "息子とアニメの映画を見た帰りに",
    "グランツーリスモの大会の帰りに",
    "以前乗ってた車を売った店に向かう途中で",
    "万が一のことを考えて早めに出たら",
    "仮に渋滞してても間に合うように出たら",
    "近所の人に挨拶してたら",
    "他人の車をよけたら",
    "前を走ってたトラックを追い越したら",
    "異常なしって言われた翌日に",
    "教習所で習った通りに走ってたのに",
]


# A likeness to a story (「友達の車と同じように、うちの車も」) or a report from someone in the car (「妻が運転してて、」):
# what follows happened to this car.
LIKENESS_AND_REPORTS = [
    "ニュースで見た車みたいに、うちの車も",
    "友達の車と同じように、うちの車も",
    "昔乗ってた車と同じで、",
    "去年と同じで、",
    "旦那から電話で、",
    "妻が運転してて、",
    "息子が今運転中で、",
    "修理してもらったばかりの車で、",
    "先月直してもらった車ですが、",
    "訓練じゃなくて本当に",
]
# Another car or person named, then a report about this car (v46 taught: riding in a friend's car now, being hit by
# someone's car, being told by a stranger; the frames of another car, another person and the car not being the topic
# cover none of them).
OTHERS_THEN_A_REPORT = [
    "友達の車に乗ってるんだけど、",
    "先輩の車を運転してたら",
    "知らない車に追突されて、",
    "隣の人の車にぶつけられて、",
    "近所のおじさんの車と接触して、",
    "近所の人に言われて気づいたけど、",
    "知らない人に教えてもらったんだけど、",
    "車とは関係ないけど、",
    "小説を書きに行く途中で、",
]


@pytest.mark.parametrize(
    "leads",
    [
        # 48 were medium or low before the frames were tied to their story (「映画館の駐車場で」, 「ニュースを聞きながら」,
        # 「知り合いの車屋さん」, 「もしもの時のために」)
        pytest.param(PLACES_AND_TIMES, id="places-and-times"),
        # a frame's word, then a step: 96 were medium before the rules looked for the step between (_told_in_a_frame)
        pytest.param(AFTER_A_STEP, id="after-a-step"),
        # 24 were medium by the rules (a frame's word, then a likeness: now a step of the story); without
        # told_after_a_step the story cap lowers 「先月直してもらった車ですが、エンジンから火が出た」
        pytest.param(LIKENESS_AND_REPORTS, id="likeness-and-reports"),
        pytest.param(OTHERS_THEN_A_REPORT, id="others-then-a-report"),
    ],
)
def test_a_danger_stays_critical_whatever_is_told_before_it(judge: UrgencyJudge, leads: list[str]) -> None:
    """Each lead before each danger (DANGERS): critical by the rules and on the fast path."""
    assert _not_critical([lead + danger for lead in leads for danger in DANGERS], judge) == []


# ...and a frame's word in a later sentence that does not settle the danger told before it.
TOLD_AFTER = [
    "。ニュースで見たのと同じ症状です",
    "。昔乗ってた車も同じだった",
    "。友達の車も前にそうなってた",
    "。念のために言っておくと、今高速の上です",
    "。異常なしって言われたばかり",
    "。準備はできてないです",
    "。夢であってほしい",
    "。教習所で習ったことを思い出してます",
    "。今は快調だったはずなのに",
    # v56 taught: a question is no settling (「問題ないでしょうか」), nor is a plan to drive on (「行こうかと思って」)
    "。このまま下りて麓の工場まで行こうかと思っているのですが問題ないでしょうか",
    "。このまま走っても平気ですか",
    "。家まで帰ろうかと思ってます",
]


def test_a_frame_in_a_later_sentence_covers_a_danger_only_when_it_settles_it(judge: UrgencyJudge) -> None:
    """「…ブレーキが効かなくなった。ニュースで見たのと同じ症状です」 stays critical (64 of these were medium before); a later
    sentence that settles it (「…修理した。それ以来まったく問題ない」) still covers it."""
    assert _not_critical([danger + after for danger in DANGERS for after in TOLD_AFTER], judge) == []
    assert (
        keyword_urgency_check("去年ラジエーターから湯気が出て修理した。それ以来まったく問題ない").level
        == "medium"
    )
    assert (
        keyword_urgency_check("ブレーキが効かない！と思ったら自転車の話だった。車は関係ないです").level
        == "medium"
    )


def test_fine_ever_since_settles_a_past_danger(judge: UrgencyJudge) -> None:
    """「あれからずっと絶好調です」 settles a danger told in the sentence before, as 「それから快調です」 does (v56's thanks for
    last year's tow truck was critical by rule); not when a 「のに」 turns to a danger again."""
    past = "去年ボンネットから煙が出てレッカーで運んでもらった時はお世話になりました！"
    assert keyword_urgency_check(past + "あれからずっと絶好調です").level == "medium"
    assert (
        keyword_urgency_check(past + "あれから快調です。今回はコーティングの見積もりをお願いします").level
        == "medium"
    )
    assert keyword_urgency_check(past + "あれからずっと快調だったのに、また煙が出ました").level == "critical"


@pytest.mark.parametrize(
    ("text", "level"),
    [
        # v57 taught: overtime without brakes is a habit (「…残業はもうブレーキが効かない状態です笑」)...
        ("ちなみに仕事の残業はもうブレーキが効かない状態です笑", "medium"),
        ("残業帰りに峠を下っていたらブレーキが効かない", "critical"),
        # ...a past flood 「その後は全く問題なく」 is settled (「全く」 in kanji, as 「まったく」 was)...
        (
            "先日の台風で車が冠水し、床まで水が入ってしまいましたが、その後は全く問題なく乗れております",
            "medium",
        ),
        ("先日の台風で車が冠水し、床まで水が入ってしまいました", "critical"),
        # ...a lamp asked about is no lamp lit (「油圧警告灯ってどんなマークですか？」)...
        (
            "取扱説明書に『油圧警告灯が点灯した場合は直ちに停車してください』とありますが、油圧警告灯ってどんなマークですか？",
            "medium",
        ),
        ("油圧警告灯ってどんなマークですか", "medium"),
        ("油圧警告灯が点灯しました", "critical"),
        # ...a boat's smoke and its burnt smell are the boat's; the car's are not...
        ("釣り用のボートのエンジンから煙が出て焦げ臭かったので、出航を見合わせました", "medium"),
        ("ボートを積んで走っていたら、車のエンジンから煙が出て焦げ臭い", "critical"),
        # ...and a car that goes only straight, its wheels deaf to the steering, has lost its steering.
        ("車がまっすぐしか進まなくなりました", "critical"),
        ("右に曲がろうとしても、タイヤがあっちを向いたまま言うことを聞きません", "critical"),
        ("高速はまっすぐ進むだけなので楽です", "low"),
        ("曲がろうとしても子供が言うことを聞かない", "low"),
    ],
)
def test_v57s_lessons_by_rule(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


def test_v57s_kana_idle_stop_asks_whether_it_is_broken(judge: UrgencyJudge) -> None:
    """「…また かかります。こわれて いませんか」 asks whether it is broken: the judgement by meaning, which put this kana idle
    stop among kana reports of lost steering (critical), goes no higher than medium. Asking whether the car may be moved
    slowly (「ゆっくりなら動かしても平気ですか」) is asking to drive on: no doubt, and the lost steering stays critical."""
    kana = "しんごうで とまると えんじんが かってに きえます。ぶれーきを はなすと また かかります。こわれて いませんか"
    assert doubts_a_fault(kana)
    assert doubts_a_fault("ブレーキを踏むと音がします。壊れてますか？")
    assert not doubts_a_fault("壊れていませんかと聞かれたけど、今ブレーキが効かない")
    assert fast_urgency_check(kana, judge).level in ("low", "medium")
    steering = (
        "車がまっすぐしか進まなくなりました。右に曲がろうとしても、タイヤがあっちを向いたまま言うことを聞きません。"
        "なんとか路肩に寄せましたが、ゆっくりなら動かしても平気ですか"
    )
    assert not doubts_a_fault(steering)
    assert doubts_a_fault("エンジンをかけるとキュルキュル鳴ります。平気ですか")
    assert judge.judge(steering)[0].level == "critical"
    assert fast_urgency_check(steering, judge).level == "critical"


@pytest.mark.parametrize(
    ("text", "level"),
    [
        # v58 taught: 「…たのは…以来一度もありません」 denies a past danger...
        ("水温計が赤になって湯気が出たのは3年前にラジエーターを替えて以来一度もありません", "medium"),
        ("水温計が赤になって湯気が出た", "critical"),
        ("湯気が出たのは一度もないけど、今日は水温計が真っ赤で湯気が出てる", "critical"),
        # ...and 「以前…たことがありました」 tells one that happened once, not what happens now
        (
            "以前、高速道路で急に加速しなくなり路肩に止まったことがありましたが、部品交換後は一度も症状が出ていません",
            "medium",
        ),
        (
            "以前も高速道路で急に加速しなくなったことがありましたが、今日また高速で急に加速しなくなった",
            "critical",
        ),
        ("以前エンジンから煙が出たことがありました。今日も煙が出ています", "critical"),
    ],
)
def test_v58s_lessons_by_rule(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


def test_v58s_creep_asked_about_is_a_doubt(judge: UrgencyJudge) -> None:
    """「…これってクリープ現象ってやつですよね？」 asks whether it is normal creep (v58: critical by meaning, near
    unintended acceleration): the judgement by meaning goes no higher than medium."""
    text = "ブレーキ離すとアクセル踏んでないのにゆっくり前に進むんですけど、これってクリープ現象ってやつですよね？"
    assert doubts_a_fault(text)
    assert doubts_a_fault("坂道で下がらないのは、これってクリープですか")
    assert not doubts_a_fault("アクセルを離しても車が勝手に加速していく")
    assert fast_urgency_check(text, judge).level in ("low", "medium")


@pytest.mark.parametrize(
    ("text", "level"),
    [
        # a stopping distance grown long, told with how long rather than 「倍」 or 「いつもより」 (v16, v29, v31, v53,
        # v54: high or low by rule, critical by meaning only when their own set was among the examples)
        ("ブレーキ踏んでも止まるまですごく距離がかかる", "critical"),
        ("ブレーキ踏んだらガガガーって音がして、止まるまでえらい距離かかったんじゃけど", "critical"),
        ("ペダルが奥までスッと入っちゃって、車が止まるまでめっちゃ時間かかる", "critical"),
        # the distance asked about, told of another vehicle or settled stays where it was (the rule asks for the
        # owner's brake or pedal before it)
        ("息子の自由研究で「車が止まるまでの距離」を調べたいそうです", "low"),
        ("雪道だと止まるまでかなり距離がかかるって本当ですか？", "low"),
        ("電車って止まるまでえらい距離かかるんやね", "low"),
        ("去年ブレーキが減ってて止まるまでえらい距離かかったけど、パッド交換してからは快調です", "medium"),
    ],
)
def test_a_stopping_distance_grown_long_is_a_brake_failure(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


V59_WORN_TO_THE_WIRE = (
    "帰省の途中で高速を走ってるんですが、SAでタイヤを見たら、右前の溝がなくなってて中から金属のワイヤーみたいなのが"
    "出てました。あと300キロくらいあるんですけど、スピード落とせば大丈夫ですか？"
)
V59_HEAVY_ON_A_BYPASS = (
    "バイパスを走っていたら急にハンドルがものすごく重くなって、両手で力いっぱい回さないと曲がらなくなりました。"
    "なんとか路肩に停めたところです。エンジンをかけ直したら直ったりしますか？"
)


@pytest.mark.parametrize(
    ("text", "level"),
    [
        # v59 taught: steering gone heavy all at once, 「急に」 told before the wheel...
        (V59_HEAVY_ON_A_BYPASS, "critical"),
        ("ハンドルが最近ちょっと重くなってきた気がする", "low"),
        # ...a tyre worn to its steel wire is high by rule (the writers put it high or critical: the rest is meaning's)
        (V59_WORN_TO_THE_WIRE, "high"),
        ("スタッドレスタイヤって中にワイヤーが入ってるんですか？", "low"),
        # ...「今は何の問題もなく」 settles a past danger as 「今は問題なく」 does
        (
            "先月、高速でブレーキが効かなくなって本当に怖い思いをしました。そのときにそちらで全部直してもらって、"
            "今は何の問題もなく走れています。次の点検はいつ頃来ればいいですか？",
            "medium",
        ),
        (
            "先月、高速でブレーキが効かなくなりました。そのときに直してもらったのに、今日また高速でブレーキが効かなくなりました",
            "critical",
        ),
        # ...「…んじゃないかってくらい」 measures something else by a danger (not a smell, nor a danger after it)
        (
            "うちの車、燃費が悪すぎてガソリンが漏れてるんじゃないかってくらい減るんですよ（笑）。まあ冗談で、"
            "たぶん私の踏み方が荒いだけです。燃費よく走るコツってありますか？",
            "medium",
        ),
        ("ガソリンが漏れてるんじゃないかってくらい臭い", "critical"),
        ("ブレーキが効かないんじゃないかってくらい止まりにくい", "critical"),
        # ...water from the exhaust on a cold morning, and the white steam after it, is the engine warming
        (
            "寒い朝にエンジンをかけたら、マフラーの先から水がポタポタ垂れてて、白い湯気みたいなのも出てました。"
            "どこかから水漏れしてるんでしょうか？しばらく走ったら湯気は消えました。",
            "low",
        ),
        (
            "寒い朝にエンジンをかけたら、マフラーの先から水がポタポタ垂れてて、白い湯気が出てて甘いにおいがする",
            "critical",
        ),
        # ...an engine that stops at a light and starts again when the brake is let go is idle stop, named or not
        (
            "新しく買った車なんですが、信号待ちで勝手にエンジンが止まっちゃいました。青になってブレーキを離したらまたかかった"
            "んですけど、これって故障ですか？",
            "low",
        ),
        ("信号待ちで勝手にエンジンが止まっちゃいました。ブレーキを離してもかかりません", "high"),
    ],
)
def test_v59s_lessons_by_rule(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


def test_v59s_questions_to_keep_driving_or_to_mend_are_no_doubt(judge: UrgencyJudge) -> None:
    """「スピード落とせば大丈夫ですか？」 with 300 km to go asks to drive on, and 「かけ直したら直ったりしますか？」 asks
    for a remedy, not whether the danger can happen: neither caps the judgement by meaning (v59: both critical by
    meaning, lowered to medium)."""
    assert not doubts_a_fault(V59_WORN_TO_THE_WIRE)
    assert doubts_a_fault("右前の溝がなくなってて中から金属のワイヤーみたいなのが出てました。大丈夫ですか？")
    assert not asks_whether_it_can_happen(V59_HEAVY_ON_A_BYPASS)
    assert asks_whether_it_can_happen("雨の日に置いとくとさびたりしますか？")
    assert fast_urgency_check(V59_WORN_TO_THE_WIRE, judge).level == "critical"
    assert fast_urgency_check(V59_HEAVY_ON_A_BYPASS, judge).level == "critical"


def test_v59s_normal_water_and_creep_are_frames(judge: UrgencyJudge) -> None:
    """Water dripping under the car after the air conditioner ran, and a car creeping slowly once the brake is let go,
    are what a car does (v59: both critical by meaning, near a fuel leak and unintended acceleration): frames, so the
    judgement by meaning goes no higher than medium — not with fuel or a smell, nor with the car speeding up."""
    water = (
        "夏場にエアコンつけて走ったあと、停めたら車の下から水がぽたぽた落ちてんねん。助手席の下あたり。"
        "これ何か漏れてるんちゃうん？めっちゃ焦ってんねんけど。"
    )
    creep = (
        "Dに入れてブレーキから足を離すと、アクセルを踏んでないのに車がゆっくり前に進んでいきます！"
        "勝手に動くなんて壊れてるんでしょうか、怖くて…。初めてのオートマ車です。"
    )
    assert in_harmless_frame(water)
    assert in_harmless_frame(creep)
    assert not in_harmless_frame(
        "エアコンつけて走ったあと、車の下から水がぽたぽた落ちてて、ガソリンのにおいもする"
    )
    assert not in_harmless_frame("ブレーキから足を離したら車がゆっくり動き出して、そのまま加速していった")
    assert fast_urgency_check(water, judge).level in ("low", "medium")
    assert fast_urgency_check(creep, judge).level in ("low", "medium")


def test_v60s_white_exhaust_in_hakata_dialect_is_the_engine_warming() -> None:
    """「白か煙」 is 「白い煙」 in Hakata dialect: white exhaust on a cold morning that clears is the engine warming (v60:
    critical by rule), not when it does not clear and smells sweet."""
    warming = (
        "寒か朝にエンジンかけたら、マフラーから白か煙みたいなとがモクモク出て、水もポタポタ垂れよるとよ。"
        "しばらく走ったら消えるっちゃけど、これって壊れとらん？"
    )
    assert keyword_urgency_check(warming).level == "low"
    not_clearing = "寒か朝にエンジンかけたら、マフラーから白か煙がモクモク出て、しばらく走っても消えんし甘いにおいがするとよ"
    assert keyword_urgency_check(not_clearing).level == "critical"


def test_v60s_dialect_questions_whether_it_can_happen(judge: UrgencyJudge) -> None:
    """「そんなことあんのすか？」 (Tohoku) and 「傷んだりせえへんの？」 (Kansai, 「だり」) ask whether something can happen
    (v60: a father's engine fire long ago and a mother's jerky braking, both critical by meaning): the judgement by
    meaning goes no higher than medium — not for an owner driving now."""
    story = (
        "うちの親父が若げえころ乗ってだ車、走ってる最中にエンジンがら火吹いだって、今でも酒飲むたんびに話すんだ。"
        "今の車でもそんなことあんのすか？"
    )
    braking = "うちのオカンの運転、ブレーキ踏むたびにガックンガックンなって首もげそうやねん（笑）。あれで車のほう傷んだりせえへんの？"
    assert asks_whether_it_can_happen(story)
    assert asks_whether_it_can_happen(braking)
    assert not asks_whether_it_can_happen("いま走ってる最中にエンジンから火吹いだ。そんなことあんのすか？")
    assert fast_urgency_check(story, judge).level in ("low", "medium")
    assert fast_urgency_check(braking, judge).level in ("low", "medium")


def test_v61s_brake_pedal_giving_way_and_revs_not_dropping_are_critical_by_rule(judge: UrgencyJudge) -> None:
    """「ペダルがカクンって抜けて」 (the brake gave way) and 「アクセルから足離しても回転が下がらない」 (revs stay up with the
    foot off) are critical by rule (v61: both low by rule, lowered to medium by the meaning's caps because the car was
    normal again and the owner asked to drive it); not an accelerator pedal, nor revs that drop."""
    gave_way = (
        "昨日の晩、ブレーキ踏んだら急にペダルがカクンって抜けて、サイドブレーキ引いて止めたんよ。今朝乗ったら普通に効くし、"
        "今日も子ども送っていかなあかんし乗ってええよね？"
    )
    revs = (
        "さっきアクセルから足離してもエンジンの回転が下がらなくて、ブレーキ思いきり踏んでNに入れてやっと止めました。"
        "今は普通に戻ってるんですが、これから仕事なので乗って行っても平気ですか？"
    )
    assert keyword_urgency_check(gave_way).level == "critical"
    assert keyword_urgency_check(revs).level == "critical"
    assert fast_urgency_check(gave_way, judge).level == "critical"
    assert fast_urgency_check(revs, judge).level == "critical"
    assert (
        keyword_urgency_check("走ってたら急にブレーキが抜けて、ペダルがスカスカになった").level == "critical"
    )
    assert keyword_urgency_check("アクセルペダルが抜けたように軽い").level != "critical"
    assert keyword_urgency_check("アクセルから足を離すと回転がすっと下がる").level == "low"


def test_a_brake_pedal_that_drops_to_the_floor_is_critical_by_rule() -> None:
    """A pedal that drops, goes or touches down to the floor (「ペダルがストンと床まで落ちた」「床までいっちゃう」) is a brake
    failure by rule, as one that sinks to it was (found leave-one-set-out in round v74: once v73 joined the examples,
    v6-038's pedal drop after a morning of squealing lay among squealing brakes, high by rule and capped to medium by
    its calm neighbourhood). Not the accelerator's pedal, nor a pedal pressed to the floor that does not accelerate."""
    for text in (
        "朝からブレーキがキーキー鳴ってて、帰りにペダルがストンと床まで落ちた",
        "ブレーキ踏んだらペダルが床までいっちゃう",
        "ペダルが床につくくらいまで踏まないと止まらない",
        "ペダルが床まで沈む",
    ):
        assert keyword_urgency_check(text).reasons == ["ブレーキの故障・効き不良の疑い"], text
    assert keyword_urgency_check("アクセルペダルが床まで落ちた").level == "low"
    assert keyword_urgency_check("アクセルを踏んでもペダルが床までいって加速しない").reasons == [
        "エンジン不調"
    ]


def test_v61s_worries_key_on_lamps_and_mistaken_oil() -> None:
    """A battery that might go flat (「上がらないか心配」) is a worry, not a flat battery; every lamp lit at the key and
    out once the engine runs is the bulb check; 「オイル漏れかと思ったらただの水やった」 is mistaken for water (v61: high,
    critical and critical by rule). Not when the battery is flat, a red lamp stays on, or the water is not water."""
    assert keyword_urgency_check("バッテリー上がらないか心配ですが、こういうものなんですか？").level == "low"
    assert keyword_urgency_check("バッテリーが上がってエンジンがかからない").level == "high"
    key_on = (
        "エンジンかける前に鍵を回すと、メーターのランプが赤とか黄色とか一斉に点くんですけど、これって大丈夫なんですか？"
        "エンジンかかったら全部消えます。"
    )
    assert keyword_urgency_check(key_on).level in ("low", "medium")
    assert (
        keyword_urgency_check(
            "鍵を回すとランプが全部点いて、エンジンかけても赤いランプが一つ消えません"
        ).level
        == "critical"
    )
    water = "車の下から水がジャージャー垂れてて、オイル漏れかと思ってびびってんけど、触ったらただの水やった。これ普通なん？"
    assert keyword_urgency_check(water).level in ("low", "medium")
    assert keyword_urgency_check("車の下に水たまりがあって、よく見たらオイル漏れでした").level == "critical"


def test_v61s_will_it_be_like_that_asks_about_a_danger_that_may_come() -> None:
    """「…したらあんな感じになるんですか？」 asks what a danger would be like (v61: a racing game's burst tyre, asked again
    about a real car after 「けど」, high by rule); not a burst that happened, nor one told before 「あんな」 in a later
    sentence."""
    game = "グランツーリスモでタイヤがバーストしてスピンしまくったんですけど、実車でもバーストしたらあんな感じになるんですか？笑"
    assert keyword_urgency_check(game).level in ("low", "medium")
    assert keyword_urgency_check("高速でタイヤがバーストしたらあんな感じになるんですか？").level == "low"
    assert keyword_urgency_check("ブレーキが効かなくなったらこんな感じになるの？").level == "low"
    assert keyword_urgency_check("さっき高速でタイヤがバーストした。あんな感じになるとは").level == "high"
    assert keyword_urgency_check("タイヤがバーストしたら、あんな音がして車が揺れた").level == "high"


def test_a_wheel_standing_askew_is_critical_by_rule(judge: UrgencyJudge) -> None:
    """A wheel tilted inward, splayed (「ハの字」) or at an odd angle is damaged running gear: critical by rule (v61: one
    buried in a roof-carrier booking, high by a noise; five writers of earlier sets put it critical too). Not a lowered
    car's camber admired or asked about."""
    buried = (
        "ルーフキャリアの取り付けをお願いしたいです。それと、関係あるかわからないんですが、先週縁石にけっこう強くぶつけてから、"
        "右前のタイヤが明らかに内側に傾いていて、ハンドルをまっすぐにしても車が右に行きます。キャリアは純正のやつで大丈夫です。"
    )
    assert keyword_urgency_check(buried).level == "critical"
    assert fast_urgency_check(buried, judge).level == "critical"
    assert (
        keyword_urgency_check("段差でガコンっていって、タイヤがハの字みたいに変な向き向いてる").level
        == "critical"
    )
    assert (
        keyword_urgency_check("シャコタンでタイヤがハの字になってるのってかっこいいですよね").level == "low"
    )
    assert (
        keyword_urgency_check("キャンバーつけてタイヤをハの字にしたいんですけど車検通りますか").level == "low"
    )


V62_PUMPED_BRAKE = (
    "最近ブレーキが1回目だとほとんど効かなくて、2回3回踏むとやっと効いてくる感じです。ポンピングすれば止まれるので"
    "慣れてきました笑。ついでにブレーキフルードの交換もお願いしたいんですが、いくらくらいですか？"
)


def test_a_brake_that_works_only_after_pumping_is_critical_by_rule(judge: UrgencyJudge) -> None:
    """A brake that barely works on the first press (「1回目だとほとんど効かなくて」) or only after several
    (「2回3回踏むとやっと効いてくる」) is failing: critical by rule, however calmly it is told beside a price question
    (v62's miss, low by rule and by meaning before). Not a question about pumping, nor another part that barely works."""
    assert keyword_urgency_check(V62_PUMPED_BRAKE).level == "critical"
    assert fast_urgency_check(V62_PUMPED_BRAKE, judge).level == "critical"
    assert keyword_urgency_check("ブレーキが朝いちばんはほとんど効かない").level == "critical"
    assert keyword_urgency_check("何度も踏むとようやく止まる").level == "critical"
    assert keyword_urgency_check("ポンピングブレーキって何回踏むのが正解ですか？").level == "low"
    assert keyword_urgency_check("ブレーキは全然問題ないけど、エアコンがほとんど効かない").level == "medium"


def test_asking_to_drive_on_to_the_next_exit_is_no_question_whether_it_is_normal(judge: UrgencyJudge) -> None:
    """「次のICまで40キロくらいで走って下りちゃおうと思うんですが問題ないですか？」 asks whether to keep driving, not
    whether what happened is normal: the question's cap does not lower a burst tyre (v62's miss, medium before)."""
    burst = (
        "高速走ってたらバンッてすごい音がして車が右に持っていかれました。今PAにいます。右前のタイヤ見たらぺしゃんこで"
        "ゴムがめくれてビラビラしてる。スペアの付け方がわからないので、次のICまで40キロくらいで走って下りちゃおうと"
        "思うんですが問題ないですか？"
    )
    assert not doubts_a_fault(burst)
    assert fast_urgency_check(burst, judge).level == "critical"
    assert not doubts_a_fault("家まで下道をゆっくり走って帰っても問題ないですか？")
    assert doubts_a_fault("エンジンをかけた時に一瞬ランプが点くのは問題ないですか？")


def test_v62s_false_alarms_by_rule() -> None:
    """v62's false alarms by rule, and what the same words say when they report a fault: the bulb check typed
    「ぜんぶ」; a battery that might go flat asked about (「上がったりせえへん？」); a neighbour's engine fire heard of,
    in Kagoshima's quotative (「火が出たち聞いて」); brakes squealing on the first presses the morning after rain."""
    bulb = "エンジンをかける時に、メーターの警告灯が一瞬ぜんぶ点いてすぐ消えます。故障じゃないですよね？"
    assert keyword_urgency_check(bulb).level == "low"
    assert keyword_urgency_check("走ってたら警告灯がぜんぶ点いて消えない").level == "high"
    assert (
        keyword_urgency_check("ファンが回っとるけど、これほっといてバッテリー上がったりせえへん？").level
        == "low"
    )
    assert keyword_urgency_check("ライトつけっぱなしでバッテリー上がったりしますか？").level == "low"
    assert keyword_urgency_check("バッテリーが上がったりして困ってる").level == "high"
    assert keyword_urgency_check("バッテリーが上がってエンジンがかからない").level == "high"
    heard = "隣んおじさんの車が、走っちょったらエンジンから火が出たち聞いて、うちのも同じ年式やっで怖かです"
    assert keyword_urgency_check(heard).level == "medium"
    assert keyword_urgency_check("友達の車がエンジンから煙が出たって聞いて心配").level == "medium"
    # what another person says of the owner's car is a report
    assert keyword_urgency_check("隣の人が、うちの車から火が出てるって言ってる！").level == "critical"
    assert keyword_urgency_check("友達が、うちの車から煙が出てるって言ってる").level == "critical"
    rain = "雨の次の日の朝だけ、最初にブレーキ踏んだ時にキーッて音がします。2〜3回踏むと消えて、その後は静かです。"
    assert keyword_urgency_check(rain).level == "low"
    assert keyword_urgency_check("雨の次の日の朝から、ブレーキを踏むたびにキーッて音がする").level == "high"


# The rounds' false alarms by rule (low or medium now, from v63's), their misses by rule (from v65's), and what the same
# words say otherwise.
ROUND_FALSE_ALARMS_BY_RULE = [
    # v63: a friend's car heard of, told with its subject's comma (「友達の車が、高速で…」: no step of the story); a
    # conjunction's 「が、」 after a verb is a step, and what follows happened to the owner
    pytest.param(
        "友達の車が、高速でブレーキフルードが漏れて止まれなくなりかけたって聞きました。事故にはならなかったらしいです。",
        "medium",
        id="v63-hearsay",
    ),
    pytest.param("友達の車を借りたが、ブレーキが効かない", "critical", id="v63-hearsay-step"),
    pytest.param(
        "友達の車が、ブレーキ抜けたって聞いてたけど、今朝うちの車もブレーキが効かない",
        "critical",
        id="v63-hearsay-then-mine",
    ),
    # v63: white exhaust on a winter morning that clears, in Tohoku dialect (「しばらくすっと消えっから」)
    pytest.param(
        "冬の朝にエンジンかけっと、マフラーから白い煙がモクモク出るんだげっと、車さ何か悪いとこあんだべか？"
        "走ってしばらくすっと消えっから、大丈夫だど思うんだげんと、一応聞いでみっぺと思って。",
        "low",
        id="v63-warming-exhaust",
    ),
    pytest.param(
        "マフラーから白い煙がモクモク出て、走ってしばらくしても消えない", "critical", id="v63-smoke-stays"
    ),
    # v63: a husband overheating at work and complaining as if his brakes failed (a joke about a person); a talk or a
    # quarrel that overheats is no engine (v36's and v48's, lowered only by the examples before)
    pytest.param(
        "うちの旦那、最近仕事でオーバーヒート気味で、家帰ってきたらブレーキ効かへんくらい文句言うねん笑。"
        "まあそれはええとして、車のほうは元気やから、来週手洗い洗車の予約取れる？",
        "low",
        id="v63-husband",
    ),
    pytest.param("最近オーバーヒート気味で水温計が上がる", "critical", id="v63-overheat"),
    pytest.param("上司の説教がオーバーヒートして2時間止まりませんでした", "low", id="v36-lecture"),
    pytest.param("夫婦喧嘩がオーバーヒートして、夫が車で出ていきました笑", "low", id="v48-quarrel"),
    pytest.param(
        "ブレーキ効かへんくらい滑る道やった、ほんまにブレーキ効かへん",
        "critical",
        id="v63-brake-after-simile",
    ),
    # v63: a child's hiragana bulb check (「いっぱい ランプが ついて すぐ きえる」)
    pytest.param(
        "おかあさんが えんじん かけるとき めーたーに いっぱい ランプが ついて すぐ きえるよ。 こわれてるの？",
        "low",
        id="v63-bulb-check",
    ),
    pytest.param("はしってたら いっぱい ランプが ついて きえない", "high", id="v63-lamps-stay"),
    # v64: a past overheating told as something that happened once (「…たことがあって」; the frame read 「…たことがあり」 only)
    pytest.param(
        "昔、山道でオーバーヒートして湯気が出たことがあって、その時はロードサービスを呼んで無事に帰れました。"
        "今の車、冷却水の交換っていつやればいいですか？",
        "medium",
        id="v64-happened-once",
    ),
    pytest.param(
        "昔、山道でオーバーヒートしたことがあって、今日もまた湯気が出てる", "critical", id="v64-again-today"
    ),
    # v64: a neighbour's car in Kagoshima's 「隣ん家」, that was sweet potatoes roasting
    pytest.param(
        "隣ん家の車から煙が出ちょったって母が騒いじょったけど、車の横で焼き芋焼いちょっただけじゃった。"
        "ついでにうちの車のオイル交換頼んもす。",
        "medium",
        id="v64-neighbour",
    ),
    pytest.param("隣ん家の車を借りて走りよったら煙が出た", "critical", id="v64-neighbours-car-driven"),
    # v64: refuelling once the fuel light is on (「給油はランプが…」)
    pytest.param(
        "いつも給油はランプが点いてからにしてるんですけど、燃料ポンプに悪いって本当ですか？",
        "low",
        id="v64-fuel-light",
    ),
    pytest.param("給油は済ませたのに、エンジンのランプが点いてる", "high", id="v64-engine-light"),
    # v65: brakes squeaking on the first press of a rainy morning that then stop (「そのあとは全然鳴りません」)
    pytest.param(
        "雨の日の朝、最初にブレーキ踏んだ時だけキーッて鳴って、そのあとは全然鳴りません。気にしなくていいですか",
        "low",
        id="v65-rain-squeak",
    ),
    pytest.param(
        "雨の日の朝、最初にブレーキ踏んだらキーッて鳴って、そのあとも鳴りっぱなしです",
        "high",
        id="v65-squeak-stays",
    ),
    # v65: a vehicle fire that closes the road ahead (「車両火災のため通行止め」) is somebody else's; the owner's is not
    pytest.param(
        "帰省中ナビに「この先、車両火災のため通行止め」って出て迂回しました。他人事じゃないなと思って。"
        "ドラレコの取り付け見積もりお願いします",
        "low",
        id="v65-road-closed",
    ),
    pytest.param("車両火災です！渋滞の中で止まってます", "critical", id="v65-fire-in-a-jam"),
    pytest.param("うちの車が車両火災になった", "critical", id="v65-own-fire"),
    # v65's miss: power lost in the overtaking lane, a warning's long name between the lane and the loss
    pytest.param(
        "ハイブリッドです。追越車線を走ってたら赤い警告と「ハイブリッドシステムチェック」って表示が出て、"
        "アクセル踏んでも全然加速しなくなりました。後ろからあおられてます",
        "critical",
        id="v65-overtaking-lane",
    ),
    pytest.param(
        "駐車場で「ハイブリッドシステムチェック」って表示が出て、アクセル踏んでも全然加速しなくなりました",
        "high",
        id="v65-not-on-the-motorway",
    ),
    # v66: a burning smell after a new part, gone in days (「3日くらいで消えました」); not one that stays or comes back
    pytest.param(
        "マフラー交換してもらった後しばらく焼けるような匂いがしてたけど、3日くらいで消えました。塗装が焼ける匂いだったんですかね",
        "low",
        id="v66-smell-gone",
    ),
    pytest.param(  # medium (a frame) before v66's lesson
        "新車のうちはブレーキが焦げ臭いかもと言われたけど、言われた通り一週間で消えた",
        "low",
        id="v66-new-car-smell",
    ),
    pytest.param(
        "マフラー交換してもらった後から焼けるような匂いがして、3日たっても消えません",
        "critical",
        id="v66-smell-stays",
    ),
    pytest.param(
        "ブレーキパッド替えてもらってから焦げ臭くて、3日で消えたけどまた今日焦げ臭い",
        "critical",
        id="v66-smell-again",
    ),
    # v66: the car ahead's tyres smoking (「前の車のタイヤから煙が！」); not when the owner's car smokes after all
    pytest.param(
        "さっき立体駐車場で、前の車のタイヤから煙が！と思ったら、スロープで空転して焦げただけで普通に登って行きました。"
        "ところで、スタッドレスの保管サービスってまだやってます？",
        "medium",
        id="v66-car-ahead",
    ),
    pytest.param(
        "前の車から煙が出てると思ったら、うちの車のボンネットから煙が出てた",
        "critical",
        id="v66-my-car-after-all",
    ),
    pytest.param(
        "信号待ちで後ろの車の人に「下から火が出てる」と言われました。どうしたら",
        "critical",
        id="v3-told-by-the-car-behind",
    ),
    # v66's miss: steering that locked at a crossing (「交差点で一瞬ハンドルがロックしたみたいに固まりました」); the lock
    # of a parked car is no failure
    pytest.param(
        "息子の送迎で毎日乗ってるんですけど、最近まっすぐ走ってても右に取られるし、昨日は交差点で一瞬ハンドルがロックしたみたいに"
        "固まりました。もう慣れてきたけど、一応いつ空いてますか？",
        "critical",
        id="v66-steering-locked",
    ),
    pytest.param(
        "エンジンを切ったらハンドルがロックして、キーが回らなくなりました", "low", id="v66-parked-lock"
    ),
    # v53's (left high by rule, lowered by the probe until v66's rules moved it): lamps flashed on purpose, in a song's
    # way; not when a lamp lights by itself afterwards
    pytest.param(
        "ドリカムの歌みたいにブレーキランプ5回点滅させたろ思ったら嫁さんに怒られてまったわ笑 ほんでカーナビの地図更新っていくらだぎゃ?",
        "low",
        id="v53-lamps-flashed-on-purpose",
    ),
    pytest.param(
        "ブレーキランプを点滅させて止まった。エンジンの警告灯が点いてる",
        "high",
        id="v53-then-a-warning-light",
    ),
    pytest.param("ブレーキランプが点滅してる", "high", id="v53-flashing-by-itself"),
    # v67's miss: a car flooded up to the seats, the water told after the place it reached (「シートのとこまで水来てた」);
    # the same order at the doors while driving through (v21's, v22's, critical by meaning only until v67); not a
    # flood asked about before it comes (「…まで水が来たら」)
    pytest.param(
        "大雨で車庫が浸水して、車の座席の上まで水来てました。水は引いたので、エンジンかけて動かしてもいいですか",
        "critical",
        id="v67-flooded-to-the-seats",
    ),
    pytest.param("道が川みたいで、もうドアの下のとこまで水が来てる", "critical", id="v67-water-at-the-doors"),
    pytest.param(
        "台風が来るみたいですが、床まで水が来たらエンジンは切ったほうがいいですか",
        "low",
        id="v67-flood-asked-about",
    ),
    # v67: a neighbour's smoke drifting over the car (「煙がずっと車にかかってました」); not the car's own smoke that
    # reaches the car behind
    pytest.param(
        "隣でたき火してて、その煙がずっと車に流れてきてました。塗装に臭いが残りますか",
        "low",
        id="v67-smoke-onto-the-car",
    ),
    pytest.param(
        "マフラーから煙がすごくて、後ろの車にかかってる", "critical", id="v67-smoke-onto-the-car-behind"
    ),
    pytest.param(
        "河原でバーベキューしてたら煙が車に流れてきて、火事かと思った笑", "low", id="v67-earlier-barbecue"
    ),
    # v67: a tyre-pressure light that went off once air was added on a cold morning; not when it came on again
    pytest.param(
        "寒い朝にタイヤの空気圧のランプが点いたけど、空気を足したら消えました",
        "low",
        id="v67-pressure-light-gone",
    ),
    pytest.param(
        "空気圧のランプが点いて、空気入れたら消えたけど、次の日にまた点きました",
        "high",
        id="v67-pressure-light-again",
    ),
    # v68's miss: a car flooded where it stood, water standing in the cabin (「床が水浸し」「足首くらいまで水がたまって」);
    # not a leak that wets the floor, nor a flood asked about before it comes
    pytest.param(
        "台風の夜に車庫が冠水して、車内の床が水浸しになってました", "critical", id="v68-cabin-under-water"
    ),
    pytest.param(
        "アンダーパスで止まってしまって、車の中の足元にくるぶしくらいまで水が入ってきた",
        "critical",
        id="v68-water-to-the-ankles",
    ),
    pytest.param("雨漏りで車内の床がちょっと濡れてます", "low", id="v68-a-leak"),
    pytest.param(
        "もし冠水で車の中の床が水浸しになったら、エンジンはかけないほうがいいですか",
        "low",
        id="v68-flood-asked-about",
    ),
    # v68: a red brake light gone once the parking brake was let down (「下ろしたら消えました」, as 「戻したら」 was);
    # not when it came on again
    pytest.param(
        "ブレーキの赤いランプが点いてたけど、パーキングブレーキを外したら消えた",
        "low",
        id="v68-parking-brake-let-down",
    ),
    pytest.param(
        "赤いブレーキのランプ、サイドを下ろしたら消えたけど、走り出したらまた点いた",
        "critical",
        id="v68-red-light-again",
    ),
    # v69's miss: a cough that does not stop is no harmless habit (「せき が とまらない」 framed the smoke as one)
    pytest.param("車の中が煙たくて、子どもの咳が止まらないんです", "critical", id="v69-a-cough-in-smoke"),
    pytest.param(
        "うしろ から けむり が でてて、くるま の なか で せき が とまらない",
        "critical",
        id="v69-hiragana-cough",
    ),
    pytest.param(
        "助手席の妻のおしゃべりが止まらない。ついでに燃える話ばかり", "low", id="v69-chatter-still-a-habit"
    ),
    # v69: a pressure light gone once the tyres were filled to the specified value (「規定値まで入れたら消えました」, as
    # 「空気を足したら」 was); not when it came on again
    pytest.param(
        "空気圧の警告灯が点いたので、スタンドで指定空気圧まで入れたら消えました",
        "low",
        id="v69-filled-to-the-value",
    ),
    pytest.param(
        "空気圧のランプが点いて、規定値まで入れたら消えたけど、翌朝また点いてた",
        "high",
        id="v69-filled-and-lit-again",
    ),
    # v70: white exhaust smoke on a freezing morning that settled after a while (「しばらくしたら収まった」) is the
    # warming exhaust; not when it grows instead
    pytest.param(
        "真冬の朝、エンジンをかけたらマフラーから白い煙がモクモク出ました。しばらくしたら収まりました",
        "low",
        id="v70-warming-exhaust-settled",
    ),
    pytest.param(
        "マフラーから白い煙がずっと出てて、しばらくしたら収まるどころか増えてきた",
        "critical",
        id="v70-exhaust-smoke-growing",
    ),
    # v70: every light on at the start and all out right away (「すぐに全部消えます」) is the bulb check; not when one
    # comes on again
    pytest.param(
        "エンジンをかけると警告灯がたくさん点いて、すぐに全部消えます",
        "low",
        id="v70-bulb-check",
    ),
    pytest.param(
        "エンジンをかけると警告灯がたくさん点いて、すぐに全部消えたのに、走っていたらまた点きました",
        "high",
        id="v70-bulb-check-then-lit-again",
    ),
    # v70: a burnt smell gone once the new air freshener was taken out is the freshener's; not when it comes back
    pytest.param(
        "車用の消臭剤を置いたら焦げたような匂いがして、外したら消えました",
        "low",
        id="v70-freshener-taken-out",
    ),
    pytest.param(
        "芳香剤を外したら焦げた匂いは消えたけど、走るとまた焦げくさい",
        "critical",
        id="v70-burnt-smell-back",
    ),
    # v70: a green lamp asked about (「緑のランプが点くんですが、何の機能ですか」) is an indicator, no warning light
    pytest.param("メーターに緑のランプが点くんですが、何の機能ですか？", "low", id="v70-green-indicator"),
    pytest.param("オレンジのランプが点いたんですが、何の機能ですか？", "high", id="v70-amber-light-asked"),
    # v71: steering play grown so large that half a turn does not move the wheels (told last, after a question)
    pytest.param(
        "二、三日前からハンドルの遊びがすごく大きくなって、半回転くらい回してもタイヤが動かない感じです",
        "critical",
        id="v71-steering-play",
    ),
    pytest.param("ハンドル切ってもタイヤが動かへん", "critical", id="v71-wheels-do-not-follow"),
    pytest.param("ハンドルロックがかかって、キーを回しても動かない", "low", id="v71-steering-lock-is-none"),
    # v71: a scare whose cause was a trivial one (「原因はただのガス欠やった」) is explained away, as 「結局…だった」 is
    pytest.param("エンジンが止まって焦ったけど、原因はただのガス欠だった", "medium", id="v71-trivial-cause"),
    pytest.param("ブレーキが効かなくなって、原因はまだ不明だった", "critical", id="v71-cause-unknown"),
    pytest.param(
        "原因はただの接触不良だったけど、今朝またブレーキが効かない",
        "critical",
        id="v71-trivial-cause-then-danger",
    ),
    # v72: a repair or a rescue after which all has been fine (「替えてもろてからは全然平気」「助けてもろてから全然問題ない」)
    pytest.param(
        "去年エンジンから煙が出て焦ったけど、ラジエーター替えてもろてからは快調や。今日はタイヤの相談",
        "medium",
        id="v72-fine-since-the-repair",
    ),
    pytest.param(
        "先週バッテリーが上がったとき助けていただいてから、ずっと問題ありません。ありがとうございました",
        "medium",
        id="v72-fine-since-the-rescue",
    ),
    pytest.param(
        "バッテリー交換してもらってから平気だったけど、今朝またバッテリー上がった",
        "high",
        id="v72-fine-since-then-again",
    ),
    # v72: the smell of a grill night out (「焼肉行ってから」), not smoke from the car after it
    pytest.param(
        "焼肉に行ったあと車の中が煙臭い。消臭どうしたらいい？", "medium", id="v72-grill-night-smell"
    ),
    pytest.param("焼肉行ってから、ボンネットから煙が出てる", "critical", id="v72-smoke-after-the-grill"),
    # v72: the sparks of fireworks seen from the car, not sparks from it
    pytest.param(
        "手持ち花火をしてたら火花が車にかかってびっくりした", "medium", id="v72-sparks-of-fireworks"
    ),
    pytest.param("花火を見に行ったら、エンジンから火花が出てた", "critical", id="v72-sparks-from-the-engine"),
    # v72: a squeal's ギー, not the ギー of a katakana word (サーターアンダギー, エネルギー)
    pytest.param("車の中に揚げたてのアンダギーの匂いが残ってる", "low", id="v72-andagi-is-no-squeal"),
    pytest.param("走るとタイヤのあたりからギーって音がする", "high", id="v72-squeal"),
    pytest.param("ブレーキ踏むとギーギー鳴る", "high", id="v72-squeal-twice"),
    # v73: a checklist being made lists what to check, not what is wrong (not what happens while making it)
    pytest.param(
        "車検前の点検リストを作ってます。ブレーキの効き、ホイールナットの緩み、オイル漏れ…他に何を入れたらいい？",
        "medium",
        id="v73-checklist",
    ),
    pytest.param(
        "点検項目をまとめました：タイヤの亀裂、ナットの緩み、ブレーキの効き", "medium", id="v73-check-items"
    ),
    pytest.param(
        "チェックリスト作ってたら、ブレーキが効かなくなった", "critical", id="v73-checklist-then-danger"
    ),
    pytest.param(
        "チェックリストを作ってるけど、いまハンドルが重くて回らない", "critical", id="v73-checklist-but-now"
    ),
    # v73: a picture book's story (「えほんの…」), not the car's
    pytest.param("息子が絵本のブレーキが壊れた機関車の話にはまってます", "medium", id="v73-picture-book"),
    pytest.param("絵本の読み聞かせ中に、うちの車から煙が出た", "critical", id="v73-reading-then-smoke"),
    # v73: the sparks of welding or a grinder nearby, as of fireworks; not sparks from the car
    pytest.param("近所の鉄工所の溶接の火花が車に飛んできそうで心配", "medium", id="v73-welding-sparks"),
    pytest.param(
        "グラインダーの火花が飛んでくる作業場の横に駐車してても平気？", "medium", id="v73-grinder-sparks"
    ),
    pytest.param(
        "溶接してもらった後からマフラーから火花が出る", "critical", id="v73-sparks-from-the-muffler"
    ),
    # v74: 「うちの車は元気」 says the owner's car is fine, as 「無事」「平気」 do (not 「元気がない」, not 「元気だったのに」)
    pytest.param(
        "キッチンカーが停まってて煙がもくもく出てたけど、あれ平気なんかな？うちの車は元気だよ",
        "medium",
        id="v74-my-car-is-genki",
    ),
    pytest.param("うちの車は元気がない。ボンネットから煙が出てる", "critical", id="v74-no-genki"),
    pytest.param(
        "うちの車は元気だったのに、今日ボンネットから煙が出た", "critical", id="v74-genki-until-today"
    ),
    # v74: a car made of snow, ice or sand is a model of one (not what happens on the way back from seeing it)
    pytest.param("雪まつりで車の雪像が燃えてる演出があってびっくりした", "medium", id="v74-snow-sculpture"),
    pytest.param(
        "雪像を見に行った帰り、ハンドルが急に重くなって曲がれない",
        "critical",
        id="v74-back-from-the-sculptures",
    ),
    pytest.param("模型を見た帰りに、ブレーキが効かなくなった", "critical", id="v74-back-from-the-models"),
    # v74, once joined: a puncture mended for now with a kit is a puncture (high), however it is typed; not the kit
    # itself, how to use it, nor what one would do with it
    pytest.param(
        "ぱんくしゅうりきっとで おうきゅうしょち したんですけど これで なんきろくらい はしれますか",
        "high",
        id="v74-kit-mended-in-kana",
    ),
    pytest.param("修理剤で穴をふさいで走ってきました", "high", id="v74-sealant-used"),
    pytest.param("パンク修理キットの直し方を教えて", "low", id="v74-how-to-use-the-kit"),
    pytest.param("もしパンクしたら修理キットで応急処置して走れますか", "low", id="v74-kit-if-ever"),
    pytest.param("修理キットで直せますか", "low", id="v74-can-the-kit-mend-it"),
    # v75: the engine's shudder as it starts again after an idling stop is how the function works (not a shaking while
    # stopped, nor a stall as it starts)
    pytest.param(
        "アイドリングストップから復帰するとき、エンジンがブルッて揺れるのは普通ですか？",
        "low",
        id="v75-idle-stop-restart",
    ),
    pytest.param("アイドリングストップ中に車がブルブル震える", "high", id="v75-shaking-while-stopped"),
    pytest.param(
        "アイドリングストップから再始動する時にガタガタ揺れてエンストする",
        "high",
        id="v75-stalls-as-it-restarts",
    ),
    # v75's run (v49-063, an example set): a heart's brake that is about to break (「心のブレーキが壊れそう」) is a
    # feeling's, as a heart's brake that does not work is; a car's brake told in the next sentence after 「あと」
    # (「それと」「ところで」) is a matter of its own, which the frame does not cover
    pytest.param(
        "カープがまた逆転されて、わしの心のブレーキが壊れそうじゃ。冗談はさておき、スタッドレスの値段教えてもらえん?",
        "medium",
        id="v75-run-a-hearts-brake",
    ),
    pytest.param(
        "心のブレーキが壊れそう。あと車のブレーキが効かなくなった",
        "critical",
        id="v75-run-and-the-cars-brake",
    ),
    pytest.param(
        "恋のブレーキが効かない。それと車のブレーキが効かない", "critical", id="v75-run-and-also-the-cars"
    ),
    # v76: white exhaust on a cold morning that clears in a few minutes (数分) is steam, as in 10 minutes; smoke that
    # has not cleared after a few minutes is not
    pytest.param(
        "寒い朝はマフラーから白い煙が出ますが、数分で消えます。大丈夫ですか",
        "low",
        id="v76-steam-in-a-few-minutes",
    ),
    pytest.param(
        "冬の朝、マフラーから白い煙が出て数分たっても消えない", "critical", id="v76-smoke-that-stays"
    ),
    # v76: petrol spilled on the body while filling up is a spill, not a leak; a drip that goes on, or petrol under
    # the car, is a leak
    pytest.param(
        "セルフ給油でこぼしてしまい、ボディにガソリンがかかりました。すぐ拭きましたが塗装は平気ですか",
        "low",
        id="v76-spill-on-the-body",
    ),
    pytest.param(
        "給油で溢れてボディにガソリンが垂れた。でもまだ車の下にポタポタ垂れてる",
        "critical",
        id="v76-spill-and-a-drip-under-the-car",
    ),
    # v76: the fear of the steering being pulled on snow, told as why winter tyres are wanted, is no steering fault;
    # the steering nearly pulled, or feared with new winter tyres on, is
    pytest.param(
        "凍った道でハンドルとられそうで怖いけん、冬タイヤに替えたいんやけど予約できる？",
        "low",
        id="v76-fear-of-snow-asks-for-winter-tyres",
    ),
    pytest.param("雪道でハンドル取られそうになった", "critical", id="v76-steering-nearly-pulled"),
    pytest.param(
        "ハンドルが取られそうで怖い、スタッドレスに替えたばかりなのに",
        "critical",
        id="v76-pulled-with-new-winter-tyres",
    ),
    # v76: a toy car typed in hiragana (らじこん, みにかー, とみか, ぷらも) is a toy, as in katakana
    pytest.param("むすこの らじこんから けむりが でてきた", "medium", id="v76-toy-in-hiragana"),
    pytest.param("むすこの くるまから けむりが でてきた", "critical", id="v76-the-car-in-hiragana"),
    # v77's misses: a bulging or corded tyre found just before a motorway drive (これから高速, 高速乗る前) is a tyre
    # that may burst at speed (v51-010 and v52-060, missed in every leave-one-out run so far, are the same); a bulge
    # with the motorway a month away, or a question before one, is not
    pytest.param(
        "これから高速で帰るけど、さっき見たらタイヤの側面がぷっくり膨らんでた",
        "critical",
        id="v77-bulge-before-the-motorway",
    ),
    pytest.param(
        "タイヤの横がぷっくり膨らんでる。来月、高速で旅行する予定",
        "high",
        id="v77-bulge-and-a-trip-next-month",
    ),
    pytest.param(
        "高速乗る前って、タイヤのどこを見ておけばいい？", "low", id="v77-a-question-before-the-motorway"
    ),
    # v77's misses: the brake that stops later than it did (止まるのが遅くなった, Tosa 止まるがも遅うなっちゅう) fails;
    # a grinding brake that still stops is high, and something else that stops late is no brake
    pytest.param(
        "ブレーキ踏むとゴリゴリ音がして、止まるのも遅くなった気がする", "critical", id="v77-brake-stops-later"
    ),
    pytest.param("ブレーキ踏んでから止まるんがおそなったわ", "critical", id="v77-brake-stops-later-in-kana"),
    pytest.param("ブレーキ踏むとゴリゴリ音がする。止まるのは普通に止まる", "high", id="v77-grinds-but-stops"),
    pytest.param("ワイパーが止まるのが遅い気がする", "low", id="v77-a-wiper-stops-late"),
    # found in v77's leave-one-set-out (v57-038, once v76 joined the examples): a garden machine's leak is not the
    # car's; a leak under the car, or a danger after it, is
    pytest.param("発電機のオイルが漏れてるんですが見てもらえますか", "medium", id="v57-a-generators-leak"),
    pytest.param(
        "草刈り機を積んだら、車の下からガソリンが漏れてる", "critical", id="v57-a-leak-under-the-car"
    ),
    pytest.param(
        "草刈り機からガソリンが漏れてて、車の下にもガソリンが垂れてる", "critical", id="v57-and-under-the-car"
    ),
    # v69's smoke, an example now: 「あともしばらく」 is no 「もし」 (if): the danger after it counts
    pytest.param(
        "エンジンを切ったあともしばらくボンネットから煙が出ていました",
        "critical",
        id="v69-mo-shibaraku-is-no-if",
    ),
    pytest.param("もしボンネットから煙が出たらどうすればいいですか", "low", id="v69-if-still-if"),
    # found beside it (v62's spill, masked by that 「もし」 until now): fuel spilled at the pump whose smell went away
    pytest.param(
        "スタンドで給油したら少しこぼれて、しばらくガソリン臭かったけど消えました",
        "low",
        id="v62-spill-aired-out",
    ),
    pytest.param(
        "給油したら溢れて、匂いは消えたけど車の下にガソリンがポタポタ垂れてる",
        "critical",
        id="v62-spill-and-a-leak",
    ),
    pytest.param(
        "給油のとき溢れた。臭いは一度消えたけど、翌日また車内がガソリン臭い",
        "critical",
        id="v62-spill-smell-back",
    ),
    # v78's false alarms by rule, told in other words: a child's drawing of the car on fire, a ceiling yellowed by a
    # former owner's cigarettes, the smell of fireworks' gunpowder; none with a danger told after it
    pytest.param(
        "息子がクレヨンで描いた絵に、車のボンネットから火が出てるところがあって笑った",
        "medium",
        id="v78-a-drawing",
    ),
    pytest.param(
        "描いた絵を見てたら、うちの車のボンネットから煙が出てきた", "critical", id="v78-looking-at-a-drawing"
    ),
    pytest.param(
        "前の持ち主がたばこを吸う人で、煙のヤニで天井が黄色くなってる", "medium", id="v78-tobacco-stain"
    ),
    pytest.param(
        "タバコの煙で天井が黄ばんでるけど、さっきからボンネットから煙が出てる",
        "critical",
        id="v78-stain-and-smoke",
    ),
    pytest.param(
        "花火をした帰り、車内が火薬のにおいで焦げ臭い。換気したら消えた", "medium", id="v78-gunpowder"
    ),
    pytest.param(
        "花火の帰りに火薬の匂いがして、ボンネットから煙が出てる", "critical", id="v78-gunpowder-and-smoke"
    ),
    # v78's other false alarms by rule, told in other words: 「仮に」 supposes as 「もし」 does, also as a preface
    # (「仮にですけど、」: the clause goes on past its けど), but not 「仮にも」 or a makeshift repair (仮に直した); a grill's
    # smell carried on clothes into the car, without smoke; a fear of brakes failing (「効かなくなるのが怖い」), unless
    # the owner says how often they do or that they did.
    pytest.param(
        "仮にですけど、運転中にボンネットから煙が出たらどうすればいいですか",
        "low",
        id="v78-supposing-as-a-preface",
    ),
    pytest.param("仮にだけど、高速でブレーキ効かなくなったらどうする？", "low", id="v78-supposing-casual"),
    pytest.param("仮に走行中にタイヤが外れたら、まず何をすればいいですか", "low", id="v78-supposing"),
    pytest.param(
        "仮にも整備士なら、今ブレーキが効かないのを何とかしてください",
        "critical",
        id="v78-karinimo-is-no-supposing",
    ),
    pytest.param("仮に直してもらったけど、またブレーキが効かない", "critical", id="v78-a-makeshift-repair"),
    pytest.param("仮にじゃなくて本当にブレーキが効かない", "critical", id="v78-not-supposing"),
    # a supposition's reach ends at 「…ても」「…ように」 (仮に or もし): what follows them is told as it happened
    pytest.param(
        "もし渋滞してても間に合うように出たら、ブレーキが効かなくなった",
        "critical",
        id="supposing-ends-at-temo",
    ),
    pytest.param(
        "焼き鳥焼いたら服が焦げ臭くなって、そのまま乗ったから車の中まで焦げ臭い",
        "medium",
        id="v78-grill-smell-carried-on-clothes",
    ),
    pytest.param(
        "焼き鳥焼いたら服が焦げ臭くなって、そのまま乗ったらボンネットから焦げ臭い煙が出てきた",
        "critical",
        id="v78-grill-smell-and-smoke",
    ),
    pytest.param(
        "ぶれーきが きかなくなるのが しんぱいで ちぇーん かいました",
        "medium",
        id="v78-fear-of-brakes-failing",
    ),
    pytest.param("ときどきブレーキが効かなくなるのが怖い", "critical", id="v78-brakes-failing-now-and-then"),
    pytest.param(
        "ブレーキが効かなくなるのが怖い、さっきも一回効かなかった", "critical", id="v78-fear-and-a-failure"
    ),
    # v79's false alarms by rule, told in other words: a burnt smell through the house (not the car), a car the owner
    # used to drive written in hiragana; each with a danger to the car after it, or riding that old car now, is not
    pytest.param("焼き魚を焦がして部屋中焦げ臭い。換気扇まわしてます", "medium", id="v79-smell-in-the-house"),
    pytest.param(
        "部屋中焦げ臭いけど、車のマフラーからも煙が出てる", "critical", id="v79-smell-in-the-house-and-smoke"
    ),
    pytest.param("むかし のってた くるまは よく けむりが でたもんだ", "medium", id="v79-a-car-i-used-to-own"),
    pytest.param("むかし のってた くるまで いま けむりが でてる", "critical", id="v79-in-that-car-now"),
    # v80's false alarms by rule, told in other words: a question of when a danger happens in general (「どんな時に…
    # ものなんですか」), steam after a wash or the rain that went at once, a bullpen that 「燃えた」 (gave runs away), the
    # exhaust of the car ahead let in; each with the owner's own danger told beside it is not
    pytest.param(
        "一般的に、どんな場合にブレーキが効かなくなるものなんでしょうか？", "medium", id="v80-when-in-general"
    ),
    pytest.param("どんなときにエンジンから煙が出るもんなの？", "medium", id="v80-when-in-general-casual"),
    pytest.param(
        "さっきボンネットから煙が出た。どんな時に煙が出るものなんですか？", "critical", id="v80-and-it-did"
    ),
    pytest.param(
        "どんな時に煙が出るのか分からないけど、今ボンネットから煙が出てる",
        "critical",
        id="v80-not-in-general",
    ),
    pytest.param(
        "雨上がりに走り出したら、ボンネットから湯気が少し出てすぐ消えました",
        "medium",
        id="v80-steam-that-went",
    ),
    pytest.param(
        "洗車してエンジンかけたらボンネットから湯気が出て、すぐ消えたけどまた出てきた",
        "critical",
        id="v80-steam-back",
    ),
    pytest.param("洗車のあとボンネットから煙が出て、消えない", "critical", id="v80-smoke-that-stays"),
    pytest.param(
        "洗車した後にボンネットから湯気が出てすぐ消えたけど、水温計が上がってる",
        "critical",
        id="v80-steam-gone-but-hot",
    ),
    pytest.param(
        "抑えが燃えてまた負けた。それよりタイヤ交換の予約できますか", "medium", id="v80-the-bullpen-burned"
    ),
    pytest.param(
        "リリーフが燃えて負けたけど、帰り道ボンネットから火が出た", "critical", id="v80-and-the-car-burned"
    ),
    pytest.param(
        "前の車の排気ガスが入ってきて臭かったので内気循環にしました",
        "medium",
        id="v80-exhaust-of-the-car-ahead",
    ),
    pytest.param(
        "前の車の排ガスかと思ったら、自分の車のマフラーから煙が出てた", "critical", id="v80-own-exhaust"
    ),
    # v81's false alarms by rule, told in other words: a scare explained away in its own sentence as fog, dust, volcanic
    # ash or a kettle's steam (「ただの朝霧でした」「砂ぼこりでした」「ただ灰が舞ってるだけ」「やかんの湯気だった」); a danger
    # after it, or told after a 「けど」 or 「でも」, is not; bare steam (「ただの湯気」) explains nothing away
    pytest.param(
        "畑の横を走ったら車の後ろが煙ってて焦ったけど、ただの土ぼこりだった", "medium", id="v81-just-dust"
    ),
    pytest.param("ボンネットから煙が出たと思ったら、やかんの湯気だった", "medium", id="v81-a-kettles-steam"),
    pytest.param(
        "火山灰がすごくて車の周りが煙ってるように見えるけど、ただ灰が飛んでるだけです",
        "medium",
        id="v81-only-ash-flying",
    ),
    pytest.param(
        "煙かと思ったら砂ぼこりでした。でもブレーキが効かない", "critical", id="v81-dust-but-brakes"
    ),
    pytest.param(
        "さっきの煙はただの霧だったけど、今度はボンネットから本当に煙が出てる",
        "critical",
        id="v81-fog-then-smoke",
    ),
    pytest.param("ただの朝霧でしたが、ボンネットから煙も出てる", "critical", id="v81-fog-and-smoke"),
    pytest.param(
        "ボンネットから湯気が出て、ただの湯気だと思ってたら水温計が真っ赤",
        "critical",
        id="v81-bare-steam-explains-nothing",
    ),
    pytest.param(
        "ただ灰が舞ってるだけかと思ったら、ボンネットから煙が出てた", "critical", id="v81-ash-and-smoke"
    ),
    # v82's false alarms by rule, told in other words: smoke denied in hiragana (「けむりが でないの」: 「で」 before a
    # negation is 出), a household appliance's smoke (a stove, a kotatsu), the car said fine 「車のほうは何ともない」, legs
    # whose 「ブレーキ」 failed after a climb or a marathon, a danger heard of as something that can happen (「…と爆発する
    # って聞いて」), a white mist from the air conditioner's vents; each with a danger of the car's beside it is not
    pytest.param("なんで くるまは けむりが でないの？", "low", id="v82-smoke-denied-in-hiragana"),
    pytest.param(
        "さっきから ぼんねっとから けむりが でて とまらない", "critical", id="v82-smoke-in-hiragana"
    ),
    pytest.param(
        "けむりは でないけど こげくさい においが する", "critical", id="v82-no-smoke-but-a-burning-smell"
    ),
    pytest.param(
        "こたつが焦げて煙が出ました。車は関係ないですがタイヤ交換の予約を", "medium", id="v82-a-kotatsu"
    ),
    pytest.param(
        "ストーブから煙が出たと思ったら、車のボンネットからも煙が出てた",
        "critical",
        id="v82-stove-and-the-car",
    ),
    pytest.param(
        "車のほうは何ともないけど、さっきからブレーキが効かない", "critical", id="v82-car-fine-but-brakes"
    ),
    pytest.param(
        "登山のあとで膝のブレーキが効かなくて、下りがきつかった", "medium", id="v82-knees-after-a-climb"
    ),
    pytest.param("足のブレーキが効かない、止まらない", "critical", id="v82-the-foot-brake"),
    pytest.param(
        "夏の車内にライターを置くと発火するって聞いて怖くなりました。本当ですか",
        "medium",
        id="v82-heard-it-can-happen",
    ),
    pytest.param(
        "エアコンをつけたら吹き出し口から白い煙みたいなのが出た。すぐ消えた",
        "medium",
        id="v82-mist-from-the-vents",
    ),
    # v83's false alarms by rule, told in other words: a team that lost 「ブレーキの壊れた車みたいに」 (a simile, unless
    # what does not stop follows it at once), a scare explained away as rain water (「ただの水でした」)
    pytest.param(
        "うちのチーム、ブレーキの効かないダンプみたいに失点が止まらない",
        "medium",
        id="v83-a-simile-of-no-brakes",
    ),
    pytest.param(
        "ブレーキの壊れた車みたいに止まらない、今も走ってる", "critical", id="v83-like-that-and-it-does"
    ),
    pytest.param("車の下が濡れててガソリン漏れかと思ったけど、ただの水でした", "medium", id="v83-just-water"),
    pytest.param(
        "ただの水でしたって言われたけど、またガソリンが漏れてる",
        "critical",
        id="v83-water-they-said-but-a-leak",
    ),
    # found in v1-v82's leave-one-set-out (v54-004, low once v82's air-conditioner mist joined the examples): a
    # temperature needle going into the red (「赤いとこに入りそう」) is overheating by rule, as 「真っ赤」 was
    pytest.param("温度計の針が赤いところに入りそうです", "critical", id="v54-needle-into-the-red"),
    pytest.param("水温のメーターも赤いとこまで行ってる", "critical", id="v54-needle-in-the-red"),
    pytest.param(
        "ブレーキが効かなくなるって聞いてたけど、今まさにそうなってる",
        "critical",
        id="v82-heard-and-now-it-does",
    ),
    pytest.param(
        "エアコンの吹き出し口から煙みたいなのが出て焦げ臭い", "critical", id="v82-vent-smoke-and-a-smell"
    ),
    pytest.param(
        "焦げ臭いにおいがして、エアコンから白い煙みたいなのが出てる",
        "critical",
        id="v82-smell-then-vent-smoke",
    ),
]


@pytest.mark.parametrize(("text", "level"), ROUND_FALSE_ALARMS_BY_RULE)
def test_the_rounds_false_alarms_by_rule(text: str, level: str) -> None:
    assert keyword_urgency_check(text).level == level


def test_v71s_lamp_questions_and_trivial_causes_by_meaning(judge: UrgencyJudge) -> None:
    """v71's false alarms by meaning, told in other words (v71 is held out): a lamp asked about, a lamp left on asked
    about in dialect, a stop on the motorway whose cause was trivial, told of a brother's car; the judgement by meaning
    goes no higher than medium (each was high or critical before). The same lamp lit red, or a stop told without its
    cause, is not capped."""
    harmless = (
        "ハンドルの横に出てる緑のハンドルみたいなマーク、あれ何のマークですか？",
        "スライドドア閉めたあと、足元のライトがしばらく点いとるんじゃけど、こがいなもんなん？",
        "エンジン切ったあとも、ヘッドライトがしばらく点いとるけど、こげなもんですか",
        "弟の車、この前高速で急に止まってしもうたんよ。ロードサービス呼んだら原因はただのガス欠じゃった",
    )
    # no higher than medium (once v71 joined the examples, its own lamp left on is the dialect one's nearest: low)
    assert [fast_urgency_check(t, judge).level in ("low", "medium") for t in harmless] == [True] * 4
    for urgent in (
        "メーターに赤いハンドルのマークが点いた、何のマーク？",
        "高速で急に車が止まってしもうたんよ",
    ):
        assert fast_urgency_check(urgent, judge).level in ("high", "critical")


def test_v72s_wet_brakes_and_a_wiped_spill_by_meaning(judge: UrgencyJudge) -> None:
    """v72's false alarms by meaning, told in other words (v72 is held out): brakes weak only at first after a wash or
    rain and back to normal after a few presses, and fuel spilled at the filler and wiped, were critical by meaning
    (their nearest examples a soft brake pedal and a cabin smelling of petrol); both are harmless frames now, so the
    judgement goes no higher than medium. Brakes that stay weak, that go again, or a spill beside a leak are not."""
    harmless = (
        "雨の日に水たまりを走ったあと、最初の一回だけブレーキの効きが甘かった。すぐ普通に戻った",
        "洗車して乗り始めたら、出だしだけブレーキの効きが鈍かった。何回か踏んだら元に戻りました",
        "セルフで給油したら溢れてボディにかかった、拭いたけどまだ少し匂う",
    )
    assert [in_harmless_frame(t) for t in harmless] == [True] * 3
    assert [fast_urgency_check(t, judge).level in ("low", "medium") for t in harmless] == [True] * 3
    for urgent in (
        "洗車のあと、ブレーキの効きが弱い。何回踏んでも戻らない",
        "洗車したら最初だけ効きが弱くて、元に戻ったと思ったらまた効かなくなった",
        "給油でこぼしたので拭いたけど、車の下からガソリンがポタポタ垂れてる",
    ):
        assert not in_harmless_frame(urgent)
    assert (
        fast_urgency_check("洗車のあと、ブレーキの効きが弱い。何回踏んでも戻らない", judge).level
        == "critical"
    )
    assert (
        fast_urgency_check("給油でこぼしたので拭いたけど、車の下からガソリンがポタポタ垂れてる", judge).level
        == "critical"
    )


def test_v73s_a_checklist_a_picture_book_and_welding_sparks_by_meaning(judge: UrgencyJudge) -> None:
    """v73's false alarms, told in other words (v73 is held out): a checklist being made, a picture book's story and
    welding sparks nearby were critical by rule and by meaning (the checklist and the sparks here were critical on the
    commit before the lessons); each is a harmless frame now, so neither the rules nor the judgement by meaning go
    higher than medium. What happens while the list is made, or sparks from the car itself, is not framed."""
    harmless = (
        "車検前の点検リストを作ってます。ブレーキの効き、ホイールナットの緩み、オイル漏れ…他に何を入れたらいい？",
        "息子が絵本のブレーキが壊れた機関車の話にはまってます",
        "近所の鉄工所の溶接の火花が車に飛んできそうで心配",
    )
    assert [fast_urgency_check(t, judge).level for t in harmless] == ["medium"] * 3
    for urgent in (
        "チェックリスト作ってたら、ブレーキが効かなくなった",
        "溶接してもらった後からマフラーから火花が出る",
    ):
        assert fast_urgency_check(urgent, judge).level == "critical"


def test_v74s_a_car_that_is_fine_and_a_car_of_snow_by_meaning(judge: UrgencyJudge) -> None:
    """v74's false alarms, told in other words (v74 is held out): smoke from a food stall's van, the owner adding that
    their own car is 「元気」, and a sand sculpture of a car falling apart 「爆発したみたいに」 were critical on the
    commit before the lessons (the van's by rule and by meaning, the sculpture by meaning alone); each is a harmless
    frame now, so neither the rules nor the judgement by meaning go higher than medium. A car that is not 「元気」,
    or what happens on the way back from the sculptures, is not framed."""
    harmless = (
        "キッチンカーが停まってて煙がもくもく出てたけど、あれ平気なんかな？うちの車は元気だよ",
        "屋台のトラックから煙がもくもく出てたけど、あれ平気なんかな？笑 うちの車は元気です",
        "砂浜で子どもと車の砂像を作ったら、波で爆発したみたいに崩れちゃった",
    )
    assert [in_harmless_frame(t) for t in harmless] == [True] * 3
    assert [fast_urgency_check(t, judge).level for t in harmless] == ["medium"] * 3
    for urgent in (
        "うちの車は元気がない。ボンネットから煙が出てる",
        "雪像を見に行った帰り、ハンドルが急に重くなって曲がれない",
    ):
        assert not in_harmless_frame(urgent)
        assert fast_urgency_check(urgent, judge).level == "critical"


def test_v76s_steam_spill_and_toy_on_the_fast_path(judge: UrgencyJudge) -> None:
    """v76's false alarms by rule, told in other words (v76 is held out): white exhaust on a cold morning that clears
    in a few minutes, petrol spilled on the body at the pump and wiped, a toy's smoke typed in hiragana were critical
    by rule; on the fast path they are low, low and medium (the toy's frame caps it). Smoke that stays, a drip under
    the car after a spill, and the car's own smoke in hiragana are critical as before."""
    assert [
        fast_urgency_check(t, judge).level
        for t in (
            "寒い朝はマフラーから白い煙が出ますが、数分で消えます。大丈夫ですか",
            "セルフ給油でこぼしてしまい、ボディにガソリンがかかりました。すぐ拭きましたが塗装は平気ですか",
            "むすこの らじこんから けむりが でてきた",
        )
    ] == ["low", "low", "medium"]
    assert [
        (fast_urgency_check(t, judge).level, fast_urgency_check(t, judge).reasons[0])
        for t in (
            "冬の朝、マフラーから白い煙が出て数分たっても消えない",
            "給油で溢れてボディにガソリンが垂れた。でもまだ車の下にポタポタ垂れてる",
            "むすこの くるまから けむりが でてきた",
        )
    ] == [
        ("critical", "発煙（煙が出ている）"),
        ("critical", "燃料漏れの疑い"),
        ("critical", "発煙（煙が出ている）"),
    ]


def test_a_sentence_meets_a_long_critical_example_by_its_danger(judge: UrgencyJudge) -> None:
    """A text of one sentence meets a critical example of several sentences by the example's sentence nearest it: a
    booking or a plan lies near a long booking message with a fault buried in it by the booking, not by the fault
    (v75-043's class; v76's winter-tyre booking told with a fear of snow, in other words). The nearest example is
    still reported; it no longer makes the sentence critical. A sentence that tells the buried fault itself is critical
    as before."""
    plan = "娘が来月免許を取るので、練習用の中古の軽を探してます"
    result, near = judge.judge(plan)
    assert result.level == "low"
    assert (
        near[0].level,
        near[0].text.startswith("お世話になっております。先日は点検ありがとうございました。実は娘が"),
    ) == (
        "critical",
        True,
    )
    assert (
        fast_urgency_check(
            "凍った道でハンドルとられそうで怖いけん、冬タイヤに替えたいんやけど予約できる？", judge
        ).level
        == "low"
    )
    assert judge.judge("赤い油さしみたいなランプが点いてエンジンからカンカン音がする")[0].level == "critical"


def test_v75s_shudder_after_an_idling_stop_by_meaning(judge: UrgencyJudge) -> None:
    """v75's false alarm by rule, told in other words (v75 is held out): the engine's shudder as it starts again after
    an idling stop, asked whether it is normal, was high by the vibration rule; the rule leaves it to the judgement by
    meaning now, which finds it no higher than medium (with v75 among the examples, its own shudder, labelled low, is
    nearest the first: low). A car that shakes while stopped, or stalls as it starts again, is high as before."""
    harmless = (
        "アイドリングストップから戻るとき、エンジンがブルッと揺れるんですが普通ですか？",
        "アイストップから再始動する瞬間、車がブルブル震えるのは仕様でしょうか",
    )
    assert [keyword_urgency_check(t).level for t in harmless] == ["low", "low"]
    assert [fast_urgency_check(t, judge).level for t in harmless] == ["low", "medium"]
    assert [
        (fast_urgency_check(t, judge).level, fast_urgency_check(t, judge).reasons[0])
        for t in (
            "アイドリングストップ中に車がブルブル震える",
            "アイドリングストップから再始動する時にガタガタ揺れてエンストする",
        )
    ] == [("high", "振動"), ("high", "エンジン不調")]


def test_v64s_questions_whether_it_is_so(judge: UrgencyJudge) -> None:
    """「そういうものなんですかね」 asks whether a behaviour is normal, and 「…って本当ですか？」 whether something heard is
    true: the judgement by meaning goes no higher than medium (v64's regenerative braking was critical by meaning,
    within the margin of unintended-acceleration examples; it is an example itself now, so the case is told in other
    words). Not 「大丈夫なん？」 or 「走っても大丈夫ですかね」: an owner asking whether it is fine to drive on has a symptom."""
    regen = "電気の車に替えたら、アクセルを緩めるだけでブレーキ踏んでないのにガクンと速度が落ちます"
    assert fast_urgency_check(regen, judge).level == "critical"
    assert doubts_a_fault(regen + "。そういうものなんですかね。")
    assert fast_urgency_check(regen + "。そういうものなんですかね。", judge).level == "medium"
    assert doubts_a_fault("燃料ポンプに悪いって本当ですか？")
    assert doubts_a_fault("こんなもんなんでしょうか")
    assert doubts_a_fault(
        "結局ハンドル揺すりながら回したらかかったけど、これ壊れとるとやろか？"
    )  # v63's, Hakata
    assert doubts_a_fault("ドアミラーが勝手にたたまれるんやけど、壊れてるんやろか")
    # v71: 「こんなもんなの」 in dialect and with 「なん？」
    assert doubts_a_fault("ルームランプが、ドア閉めたあともしばらく点いとるんじゃけど、こがいなもんなん？")
    assert doubts_a_fault("エンジンかけたらしばらくうるさいけど、こげなもんですか")
    assert doubts_a_fault("こないなもんなんか？")
    assert doubts_a_fault("こんなもんなん？")
    assert not doubts_a_fault("こがいなもんなん？今高速を走りよるんじゃけど")
    assert not doubts_a_fault("バッテリーのマーク赤く点いたまま走っとるんやけど大丈夫なん？")
    assert not doubts_a_fault("とりあえず走っても大丈夫ですかね")
    assert not doubts_a_fault("ブレーキが効かないって本当に怖いです")


def test_v65s_kana_question_and_a_car_said_to_be_fine(judge: UrgencyJudge) -> None:
    """Whether it is normal asked in kana, spaces and all (「これは ふつう ですか」), caps the judgement by meaning as the
    question in kanji does (v65's handbrake lamp was high by meaning, near red brake-lamp reports); and 「車は元気」
    says the car works, as 「車は何ともない」 does (v65's drinking party where the writer 「火ぃ吹いた」 was critical by
    meaning) — neither lowers a danger the rules find. (v65's texts are examples now: the cases are told in other words,
    each high or critical by meaning without the words that cap it.)"""
    assert doubts_a_fault("さいどぶれーき ひくと あかい らんぷが つくんですが これは ふつう ですか")  # v65's
    lamp = "あかい ぶれーきの らんぷが つきました"
    assert fast_urgency_check(lamp, judge).level == "high"
    assert doubts_a_fault(lamp + "。これは ふつう ですか")
    assert fast_urgency_check(lamp + "。これは ふつう ですか", judge).level == "medium"
    assert doubts_a_fault("えんじんが とまります。こしょう でしょうか")
    assert not doubts_a_fault("ふつうに はしれます")
    assert says_it_works(
        "昨日の飲み会でエンジンかかりすぎて火ぃ吹いたばい笑 車は元気やけん、来週タイヤ見てもらえる？"
    )
    assert says_it_works("くるま は げんき です")
    party = "同僚がエンジンかかりすぎて火ぃ吹いとったわ"
    assert fast_urgency_check(party, judge).level == "critical"
    assert says_it_works(party + "。車は元気やけん")
    assert fast_urgency_check(party + "。車は元気やけん", judge).level == "medium"
    assert not says_it_works("車は元気だけどブレーキが効かない")
    assert fast_urgency_check("車は元気だけどブレーキが効かない", judge).level == "critical"


def test_v67s_katakana_telegram_asking_a_price(judge: UrgencyJudge) -> None:
    """A text typed in katakana is read in hiragana, without its spaces, for whether it is a request: v67's telegram asking
    the price of new brake pads was critical by meaning, near the katakana telegram of brakes that failed on a slope
    (v67's texts are examples now: the case is told in other words). A telegram asking for help at once, or what to do,
    is no request; nor is a kana message that asks to be told quickly while driving."""
    price = "ブレーキオイル コウカン リョウキン シリタシ ヘンジ マツ"
    assert is_a_request(price)
    assert fast_urgency_check(price, judge).level == "low"
    assert is_a_request("ナビ ノ チズ ヲ アタラシク シタイ。イクラ カカリマスカ。")
    assert not is_a_request("ブレーキ キカズ サカ クダレヌ スグ オシエテ")
    assert not is_a_request("ブレーキ キカズ ドウスレバ ヨイカ オシエテ")
    assert not is_a_request("ぶれーきが きかない いま はしってる はやく おしえて")
    assert is_a_request("くるまの なかで きく おすすめの うた おしえて")


def test_v68s_questions_and_a_light_explained(judge: UrgencyJudge) -> None:
    """Whether the engine may be started (「エンジンかけても大丈夫ですか？」) is no question whether something is normal: the
    owner is about to use the car as it is (v68's flooded car was critical by meaning, capped at medium by that reading).
    「これで合ってます？」 asks whether what the owner did is right, and 「これ自動なんですね」 says they found a function:
    both cap the judgement by meaning; and a red light gone once the parking brake was let down says the car is fine
    (v68's texts are examples next round: the cases are told in other words, each critical or high by meaning without
    the words that cap it)."""
    flooded = "台風のあと、車がどっぷり水に浸かってた"
    assert keyword_urgency_check(flooded).level == "low"
    assert fast_urgency_check(flooded, judge).level == "critical"
    assert not doubts_a_fault(flooded + "。エンジンかけても大丈夫ですか？")
    assert fast_urgency_check(flooded + "。エンジンかけても大丈夫ですか？", judge).level == "critical"
    assert doubts_a_fault(flooded + "。これって大丈夫ですか？")
    assert fast_urgency_check(flooded + "。これって大丈夫ですか？", judge).level == "medium"
    light = "赤いびっくりマークが点いてたけど、パーキングブレーキを戻したら消えた"
    assert says_it_works(light)
    assert fast_urgency_check(light, judge).level == "medium"
    assert doubts_a_fault(light + "。これで合ってる？")
    assert not says_it_works(
        "赤いびっくりマークが点いて、パーキングブレーキを戻したら消えたけど、またすぐ点いた"
    )
    assert not says_it_works("赤いびっくりマークが点いて、パーキングブレーキを戻しても消えない")
    lock = "発進するとカチャッと鍵が閉まる音がする"
    assert doubts_a_fault(lock + "。これ自動なんですね、知らなかった")
    assert not doubts_a_fault("勝手に自動でスピードが上がるんです")


def test_v69s_questions_about_buying_and_using_explained(judge: UrgencyJudge) -> None:
    """Whether the shop sells or stocks something (「…って売ってますか？」「置いてます？」) and not knowing how to use a
    function (「つなぐ ほうほう が わかりません」, wherever it is said) are requests: low by meaning, but for a sentence
    beside them that tells of a danger now (v69's texts are examples next round: the cases are told in other words).
    「…わからないくらい効かない」 asks no price (「いくら」 read it as one)."""
    for request in (
        "ルーフキャリアって売ってますか？",
        "チャイルドシートのカバー、そちらに置いてます？",
        "なび と すまほ を せつぞく する ほうほう が わかりません",
        "ナビに音楽を登録する方法がわからないので教えてほしい",
        "タイヤ交換っていくらいりますか？",  # 「いくらい」 of 「…ないくらい」 is no price; 「いくらいります」 is
    ):
        assert is_a_request(request), request
    assert is_a_request("すまほ を つなぐ ほうほう が わかりません。 むすこ も わからない そうです")
    for not_one in ("エンジンが止まらない。止め方がわからない", "ブレーキの踏み方がわからないくらい効かない"):
        assert not is_a_request(not_one), not_one
    smoke = "ボンネットから煙が出てます。消火器って売ってますか？"
    assert is_a_request(smoke) and fast_urgency_check(smoke, judge).level == "critical"
    driving = "いま走っててボンネットから煙が出てます。消火器って売ってますか？"  # what to do now: no request
    assert not is_a_request(driving) and fast_urgency_check(driving, judge).level == "critical"


def test_a_report_beside_a_question_that_reads_like_a_story_is_judged_by_its_sentence(
    judge: UrgencyJudge,
) -> None:
    """The story cap asks each sentence the rules find urgent on its own again, as the calm cap does: once v77's
    fire-extinguisher questions about a frying pan and burnt toast (low) were examples, 「いま走っててボンネットから煙が
    出てます。消火器って売ってますか？」 lay among them and fell to medium. Its first sentence is like nothing but
    reports, and nearer them than the text is to its story; a sentence that only names the danger (「煙？いえ全然…」),
    tells of one put right, or is a cry the next sentence takes back does not undo the cap."""
    driving = "いま走っててボンネットから煙が出てます。消火器って売ってますか？"
    # its nearest example is the story (whether story_like takes it also depends on a critical example lying within
    # the margin, which keeps the rules' level by itself): the sentence keeps it either way
    story = judge.nearest(driving)[0]
    assert story.text in judge.stories and story.level == "low" and "消火器" in story.text
    assert reported_beside_the_story(judge, driving, story)
    assert cap_note(judge, driving, judge.nearest(driving)) is None
    assert fast_urgency_check(driving, judge).level == "critical"
    report_nearest = judge.nearest(sentences_of(driving)[0])[0].similarity
    assert report_nearest > story.similarity
    # a story nearer the text than the report's sentence is to any report keeps its cap
    assert not reported_beside_the_story(
        judge, driving, dataclasses.replace(story, similarity=report_nearest + 0.001)
    )
    loose = dataclasses.replace(
        story, similarity=0.0
    )  # whatever the story, these sentences are no reports of their own
    for settled in (
        "煙？いえ全然出てないです、大丈夫です。冬にマフラーから白い湯気が出るのは普通だと聞いたので、確認したかっただけです。",
        "先月エンジン警告灯が点いてセンサー替えてもらって、それからランプは消えたまま。次のオイル交換はいつ頃がいい？",
        "ボンネットから煙が出てる",  # one sentence: the text's own neighbourhood decides
    ):
        assert not reported_beside_the_story(judge, settled, loose), settled
    # a cry quoted by the sentence after it is no report of its own (v54-084 in other words)
    cry = "車内が焦げ臭い！と思ったら、助手席に置いた焼き芋の袋だった"
    assert told_sentences(cry) == [cry] and len(sentences_of(cry)) == 2
    assert not reported_beside_the_story(judge, cry, loose)
    assert reported_beside_the_story(judge, "車内が焦げ臭い！とりあえず降りました", loose)
    assert told_sentences("煙が出て車内が焦げ臭い！とりあえず降りました") == [
        "煙が出て車内が焦げ臭い！",
        "とりあえず降りました",
    ]
    assert told_sentences("マフラーから白い煙！って夫が騒いでた") == ["マフラーから白い煙！って夫が騒いでた"]


def test_a_plan_is_no_fear(judge: UrgencyJudge) -> None:
    """「…かと思って」 frames a danger only feared (「火が出るかと思って焦りました」), not a plan (「売ろうかと思って」,
    「行こうかと思って」): a danger told after a plan is one the owner has."""
    assert keyword_urgency_check("静電気でバチッときて、火が出るかと思って焦りました").level == "medium"
    for plan in (
        "車を売ろうかと思ってました。",
        "週末は海に行こうかと思って。",
        "洗車しようかと思ってたんです。",
    ):
        assert keyword_urgency_check(plan + "エンジンから煙が出ています").level == "critical", plan
        assert fast_urgency_check(plan + "エンジンから煙が出ています", judge).level == "critical", plan


@pytest.mark.parametrize(
    "text",
    [
        "赤い油さしみたいな警告灯が点いた",  # nearest: 「赤い油さしみたいな警告灯ってどういう意味？今は点いてない…」
        "寒い朝、マフラーから白い煙がずっと出てて甘い匂いがする",  # nearest: white exhaust that clears (low)
        "ブレーキを替えたら効かない。最初はそういうもの？",
    ],
)
def test_neighbours_that_name_no_danger_never_lower_the_rules(judge: UrgencyJudge, text: str) -> None:
    """Critical by rule while the nearest examples are not urgent: the fast path stays critical. (Letting any such
    neighbours lower the rules was tried on the rounds as run and rejected: it lowers these three, each a danger told
    near a harmless question or normal behaviour. Besides a story about a danger, only a calm neighbourhood caps the
    rules: three not urgent examples, none a question when the text is none, and the danger's own sentence calm too.)"""
    assert keyword_urgency_check(text).level == "critical"
    assert [n.level for n in judge.nearest(text)[:2]] == ["low", "low"]
    assert fast_urgency_check(text, judge).level == "critical"


def test_asking_whether_to_drive_on_through_deep_water_is_no_doubt(judge: UrgencyJudge) -> None:
    """「このまま突っ切っても平気？」 asks whether to keep driving, like 「このまま運転して帰っても平気？」: the judgement by
    meaning is not capped as a doubt (v17's road like a river was medium that way)."""
    text = "冠水してて道が川みたい。タイヤが半分くらい水に沈んでるけど、このまま突っ切って大丈夫？"
    assert judge.judge(text)[0].level == "critical"
    assert fast_urgency_check(text, judge).level == "critical"


def test_a_question_about_how_a_device_works_or_what_is_normal_is_judged_by_the_rules(
    judge: UrgencyJudge,
) -> None:
    """「どのくらいの衝撃で開く？」 asks how a function works; 「最初はそういうもの？」 doubts a fault: the judgement by
    meaning stays low / goes no higher than medium, the rules decide (a brake that does not work stays critical)."""
    assert fast_urgency_check("エアバッグってどれくらいの衝撃で作動するんですか？", judge).level == "low"
    assert fast_urgency_check("タイヤを新しくしたら乗り心地が硬い。最初はそういうもの？", judge).level in (
        "low",
        "medium",
    )
    assert fast_urgency_check("ブレーキを替えたら効かない。最初はそういうもの？", judge).level == "critical"
    assert fast_urgency_check("ハンドル重い！と思ったらエンジンかけてなかった", judge).level in (
        "low",
        "medium",
    )
    assert fast_urgency_check("ハンドルが重いと思ったら急に回らなくなった", judge).level != "low"


@pytest.mark.parametrize(
    "text",
    [
        # a lyric first, then the brake now (after 「けど、今本当に」)
        "歌の歌詞でブレーキが効かないってあるけど、今本当にブレーキが効かない",
        # a body that overheats first, then the car (after 「、車も」)
        "体がオーバーヒートしそうなくらい暑い、車もオーバーヒートして湯気が出てる",
    ],
)
def test_a_later_danger_after_a_step_lifts_the_caps_of_the_first(judge: UrgencyJudge, text: str) -> None:
    """The story and calm caps look at the text that opens with a danger; a later danger after a step of the story, a
    turn to today or a turn to the car itself happens now (both were medium when only the first danger counted)."""
    assert told_after_a_step(text)
    assert fast_urgency_check(text, judge).level == "critical"


def test_two_dangers_told_in_one_breath_are_no_step() -> None:
    """Dangers told one after the other with no step between (a story that names two) leave the text opening with
    the danger, as before."""
    assert not told_after_a_step("ボンネットから煙が出て火も見えたってニュースでやってた")
    assert not told_after_a_step("オーバーヒートして煙がすごかったって友達が言ってた")


def test_a_sentence_that_is_a_danger_and_nothing_else_is_a_report_whatever_follows(
    judge: UrgencyJudge,
) -> None:
    """「ブレーキが効かなくなった。教習所で習ったことを思い出してます」 lies nearest a story about a driving school (an
    example since v30, so near that no critical example is within the margin): its first sentence is the danger and
    nothing else, so neither cap lowers it. A sentence that says more than its danger is no such report."""
    text = "ブレーキが効かなくなった。教習所で習ったことを思い出してます"
    assert story_like(judge, judge.nearest(text)) is not None
    assert reports_a_bare_danger(text)
    assert cap_note(judge, text, judge.nearest(text)) is None
    assert fast_urgency_check(text, judge).level == "critical"
    assert not reports_a_bare_danger(
        "家のドライヤーが焦げ臭くなって買い替えた。ちなみに車の保証って何年でしたっけ"
    )
    assert not reports_a_bare_danger("ブレーキが効かなくなった")  # one sentence: the caps decide as before


def test_a_rebuild_leaves_a_vectors_file_whose_vectors_did_not_change(tmp_path: Path) -> None:
    """build_manual_vectors.py rewrites a shipped file only when its texts or vectors changed: a rebuild's float noise
    (about 1e-8) keeps the file byte for byte; a new text or a moved vector writes it."""
    out = tmp_path / "vectors.npz"
    vectors = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)
    assert save(out, ["a", "b"], vectors) == "written"
    before = out.read_bytes()
    assert save(out, ["a", "b"], vectors + np.float32(1e-8)) == "unchanged"
    assert out.read_bytes() == before
    assert save(out, ["a", "b"], vectors + np.float32(1e-3)) == "written"
    assert save(out, ["a", "c"], vectors + np.float32(1e-3)) == "written"
    assert list(np.load(out)["digests"]) == [text_digest("a"), text_digest("c")]


def test_a_rebuild_embeds_only_new_texts_and_keeps_the_shipped_vectors() -> None:
    """build_manual_vectors.py keeps the shipped vector of a text it already has (another machine's vectors differ
    by float noise; rewriting them all would churn git) and embeds the new texts, in the texts' order."""
    embedder = BundledE5Embedder()
    asked: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        asked.append(list(texts))
        return embedder.embed_queries(texts)

    old = ["ブレーキが効かない", "エアコンが効かない"]
    shipped = dict(
        zip((text_digest(t) for t in old), embedder.embed_queries(old) + np.float32(1e-4), strict=True)
    )
    vectors, embedded = vectors_of(["タイヤがパンクした", *old], shipped, embed)
    assert embedded == 1
    assert asked == [old, ["タイヤがパンクした"]]  # the kept ones checked again, then the new one embedded
    assert np.array_equal(vectors[1:], np.stack([shipped[text_digest(t)] for t in old]))
    assert np.allclose(vectors[0], embedder.embed_queries(["タイヤがパンクした"])[0], atol=1e-6)


def test_a_rebuild_embeds_every_text_again_when_the_shipped_vectors_are_another_models() -> None:
    """Shipped vectors that are not the embedder's (here the passage side's, e5's other prefix) are all replaced."""
    embedder = BundledE5Embedder()
    old = ["ブレーキが効かない", "エアコンが効かない"]
    shipped = dict(zip((text_digest(t) for t in old), embedder.embed_documents(old), strict=True))
    vectors, embedded = vectors_of(old, shipped, embedder.embed_queries)
    assert embedded == 2
    assert np.allclose(vectors, embedder.embed_queries(old), atol=1e-6)


def test_v77s_bulge_before_the_motorway_and_a_brake_that_stops_later_on_the_fast_path(
    judge: UrgencyJudge,
) -> None:
    """v77's misses, told in other words (v77 is held out). A grinding brake that stops later than it did was high on
    the fast path (its nearest examples, grinding brakes that still stop, are high). v77's bulging tyre found just
    before a motorway drive was high too, near bare bulges; most other wordings of it were critical by meaning alone
    (v51-010 and v52-060 are examples), but only by which examples happen to lie nearest. The rules find both dangers
    now, whatever the wording, and the fast path gives the rule's reason first. A bulge with no drive named, and the
    grinding brake that still stops, stay high (a bulge with the motorway a month away is high by rule and critical by
    meaning, near 「…明日高速で実家帰る予定」: the fast path takes the higher, so it is not asserted here)."""
    assert [
        (fast_urgency_check(t, judge).level, fast_urgency_check(t, judge).reasons[0])
        for t in (
            "これから高速で帰るけど、さっき見たらタイヤの側面がぷっくり膨らんでた",
            "ブレーキ踏むとゴリゴリ音がして、止まるのも遅くなった気がする",
        )
    ] == [
        ("critical", "傷んだタイヤ（コブ・中のコード）での高速走行"),
        ("critical", "ブレーキの故障・効き不良の疑い"),
    ]
    assert [
        fast_urgency_check(t, judge).level
        for t in (
            "タイヤの横がぷっくり膨らんでる。空気は減ってないみたい",
            "ブレーキ踏むとゴリゴリ音がする。止まるのは普通に止まる",
        )
    ] == ["high", "high"]


def test_a_message_in_romaji_is_judged_as_read_in_kana(judge: UrgencyJudge) -> None:
    """v78 missed a critical message typed in romaji: neither the rules nor the examples read Latin letters as
    Japanese. The fast path judges such a message as read in kana too (core.text.romaji) and takes the more urgent
    judgement; a message in English or in Japanese is judged as written only."""
    failing = "kousoku de bureeki ga zenzen kikanai, tasukete"
    assert keyword_urgency_check(failing).level == "low"  # the rules see no Japanese word in it
    result = fast_urgency_check(failing, judge)
    assert (result.level, result.reasons[0]) == ("critical", "ブレーキの故障・効き不良の疑い")
    assert fast_urgency_check("bonnetto kara shiroi kemuri ga dete kita", judge).level == "critical"
    assert fast_urgency_check("tenken no yoyaku o shitai desu", judge).level == "low"
    for written in ("My car brake is not working", "ブレーキが効かない"):
        assert fast_urgency_check(written, judge) == judged_as_written(written, judge)


def test_v79s_false_alarms_by_meaning_told_in_other_words(judge: UrgencyJudge) -> None:
    """v79's false alarms by meaning (v79 is held out), told in other words: a question in hiragana about which lamps
    are dangerous, from an owner who says none is lit now (says_it_works: 「いまは なにも ついていません」), and a story
    heard in Tohoku dialect ending in a question whether the shop stocks something (「…置いでらが？」, a request)."""
    lamps = "らんぷの いろで あぶないのは どれか しりたいです。いまは なにも ついていません"
    assert says_it_works(lamps)
    assert fast_urgency_check(lamps, judge).level in ("low", "medium")
    heard = "おととしの冬、近所の人の車がマフラー雪さ埋まって危ねがったって聞いだ。スコップって置いでらが？"
    assert is_a_request(heard)
    assert fast_urgency_check(heard, judge).level == "low"
    # none lit now, but a brake that did not work a moment ago
    failed = "いまは なにも ついていないけど さっき ぶれーきが きかなかった"
    assert not says_it_works(failed)
    assert fast_urgency_check(failed, judge).level == "critical"


def test_v81s_false_alarm_by_meaning_told_in_other_words(judge: UrgencyJudge) -> None:
    """v81's child's message in hiragana (v81 is held out) lay near a hiragana cry of a car on fire; it says the car
    is not burning (「くるま…もえてないよ」) and no fire (「かじじゃないよ」): the car works (`function_ok`), and the
    judgement by meaning goes no higher than medium. Told in other words; a danger beside it is not capped."""
    fine = "うちの くるまは もえてないよ だいじょうぶだよ"
    assert says_it_works(fine) and says_it_works("かじじゃないよ。くるまやさんに なりたいな")
    assert fast_urgency_check(fine, judge).level in ("low", "medium")
    smoke = "くるまは もえてないけど ぼんねっとから けむりが でてる"
    assert not says_it_works(smoke)
    assert fast_urgency_check(smoke, judge).level == "critical"
    assert fast_urgency_check("火事じゃないけど、さっきから焦げ臭い", judge).level == "critical"


def test_v83s_cat_in_the_engine_bay_told_in_hiragana_is_a_frame(judge: UrgencyJudge) -> None:
    """v83's hiragana message about cats that get into the engine bay in winter (v83 is held out) lay near hiragana
    reports of steam; a cat that 「はいる」 / 「入っ」 there is the cat frame, as one that 「入り込む」 was, so the judgement
    by meaning goes no higher than medium. A danger after it is not capped."""
    cats = "ねこが えんじんるーむに はいるって きいたので まいにち ぼんねっと たたいてます"
    assert in_harmless_frame(cats) and in_harmless_frame("猫がエンジンルームに入ってないか毎朝見てます")
    assert fast_urgency_check(cats, judge).level in ("low", "medium")
    smoke = "猫がボンネットの中に入ってたみたいで、エンジンかけたら焦げ臭い煙が出た"
    assert fast_urgency_check(smoke, judge).level == "critical"


def test_a_torn_tyre_with_its_cords_showing_is_critical_by_rule() -> None:
    """Joining v78 took u034 (「タイヤの横がぱっくり裂けて、中のワイヤーが見えてる」, critical) to high in leave-one-set-out:
    the rules read only tyre damage. A tyre torn, cut or peeled with its cords showing is critical by rule, as every
    set labels it; cords showing through a worn tread, or a cut with none showing, stay high."""
    torn = keyword_urgency_check("左前のタイヤの横がざっくり裂けて、中の針金が見えてます")
    assert (torn.level, torn.reasons) == ("critical", ["裂けたタイヤ（中のコードが見えている）"])
    assert keyword_urgency_check("タイヤのゴムがべろっとめくれて、ワイヤーがむき出し").level == "critical"
    assert keyword_urgency_check("タイヤの溝がすり減って、中の針金が見えてます").level == "high"
    assert keyword_urgency_check("タイヤの横が少し裂けてる").level == "high"
