"""The MATCH expression built from a user's question: what it searches for, and that nothing
a user can type breaks it, checked against a real FTS5 table."""

from __future__ import annotations

import pytest
import sqlean
from clawbot_memory.query import index_text, keyword_query, matched_lines, question_keys
from hypothesis import given, settings
from hypothesis import strategies as st

TOKENIZERS = ["unicode61 remove_diacritics 2", "porter unicode61 remove_diacritics 2"]

DOCS = [
    "Priya: I went to the climbing gym yesterday and it was exhausting.",
    "Tomas: We went kayaking on the river with the kids last week.",
    "Ines: Spent a long weekend in Rome, mostly for the food.",
    "Note: the deploy key is AND-NOT-OR (ask Sam); C++ and C# are both fine.",
    "今天我们讨论了记忆系统的设计，明天继续。",
    "東京で寿司を食べました。",
    "José visited the café in Zürich.",
]


@pytest.fixture(params=TOKENIZERS)
def fts(request):
    db = sqlean.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, tokenize='{request.param}')")
    db.executemany("INSERT INTO t(rowid, text) VALUES (?, ?)", [(i, index_text(d)) for i, d in enumerate(DOCS)])
    yield db
    db.close()


def search(db, question: str) -> list[int]:
    match = keyword_query(question)
    if match is None:
        return []
    return [r for (r,) in db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (match,))]


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # filler words are left out, the rest ORed, each quoted
        ("When did Priya go to the climbing gym?", '"priya" OR "go" OR "climbing" OR "gym"'),
        ("What's   NEW?!", '"new"'),
        # a question of filler only is still searched
        ("what is this", '"what" OR "is" OR "this"'),
        # the same word twice is searched once
        ("rome Rome ROME", '"rome"'),
        # FTS5 syntax in user text is only words
        ('"unbalanced quote', '"unbalanced" OR "quote"'),
        ("AND OR NOT NEAR", '"near"'),
        ("AND OR NOT", '"and" OR "or" OR "not"'),
        ("deploy AND key NOT (Sam)", '"deploy" OR "key" OR "sam"'),
        ("col:value prefix* -minus +plus ^caret {a b}", '"col" OR "value" OR "prefix" OR "minus" OR "plus" OR "caret" OR "b"'),
        ("C++ vs C#", '"c" OR "vs"'),
        ("snake_case", '"snake" OR "case"'),
        # nothing searchable
        ("", None),
        ("   ", None),
        ("?!*()\"'", None),
        ("___", None),
        # CJK: runs become overlapping two-character phrases, one character alone stays
        ("记忆系统", '"记 忆" OR "忆 系" OR "系 统"'),
        ("寿司", '"寿 司"'),
        ("猫", '"猫"'),
        ("GPT模型", '"模 型" OR "gpt"'),
    ],
)
def test_query_text(question, expected):
    assert keyword_query(question) == expected


@pytest.mark.parametrize(
    ("question", "hit"),
    [
        ("When did Priya go to the climbing gym?", 0),
        ("kayaking on the river", 1),
        ("Did Ines go to Rome?", 2),
        ('deploy key "AND-NOT-OR"', 3),
        ("C++", 3),
        ("记忆系统是什么", 4),  # unspaced Chinese finds the sentence that holds the words
        ("明天", 4),
        ("寿司", 5),
        ("Jose cafe Zurich", 6),  # diacritics are folded
        ("JOSÉ CAFÉ", 6),  # and so is the case of a non-ASCII word
    ],
)
def test_questions_find_their_document(fts, question, hit):
    assert search(fts, question)[:1] == [hit]


def test_stemming_tokenizer_matches_word_forms():
    db = sqlean.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
    db.execute("INSERT INTO t(rowid, text) VALUES (1, 'We went camping with the kids')")
    assert db.execute("SELECT rowid FROM t WHERE t MATCH ?", (keyword_query("Does she camp?"),)).fetchall() == [(1,)]


def test_index_text_leaves_spaced_text_alone():
    assert index_text("Hello, world: 2023-05-08") == "Hello, world: 2023-05-08"
    assert index_text("A记忆B").split() == ["A", "记", "忆", "B"]


def test_a_very_long_question_is_cut_to_a_bounded_query():
    words = [f"word{i}" for i in range(5000)]
    match = keyword_query(" ".join(words))
    assert match is not None and match.count(" OR ") < 64


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_no_user_text_breaks_the_match_expression(text):
    db = sqlean.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
    db.execute("INSERT INTO t(rowid, text) VALUES (1, ?)", (index_text(text),))
    match = keyword_query(text)
    if match is not None:
        db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


# Latin, Greek and Cyrillic letters, digits, punctuation and spaces, and CJK: scripts whose
# letters SQLite's Unicode tables know (a letter added to Unicode later may fold differently)
WRITTEN = st.characters(max_codepoint=0x52F, categories=["L", "N", "P", "Zs"], exclude_characters="\x00") | st.sampled_from("记忆系统寿司東京한국어")


@settings(max_examples=300, deadline=None)
@given(st.text(WRITTEN, max_size=120))
def test_a_text_is_found_by_its_own_words(text):
    db = sqlean.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
    db.execute("INSERT INTO t(rowid, text) VALUES (1, ?)", (index_text(text),))
    match = keyword_query(text)
    if match is None:
        return
    rows = db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()
    assert rows == [(1,)]  # every searched word came from the text, so the text itself matches


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(['"', "'", "*", "-", "+", "^", ":", "(", ")", "{", "}", "NEAR", "AND", "OR", "NOT", "near/3", " ", "a", "x", "记", "\x00", "\u200b"]),
        max_size=30,
    )
)
def test_fts5_operators_in_any_order_never_break_it(parts):
    db = sqlean.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
    match = keyword_query("".join(parts))
    if match is not None:
        db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


@pytest.mark.parametrize(
    ("question", "text", "expected"),
    [
        # each line: the question's words it holds (inflections alike, case folded, filler left out)
        ("What did Tomas paint?", "Tomas: I painted a barn\nPriya: nice!\n", [{"toma", "pain"}, set(), set()]),
        ("Where has Tomas camped?", "We went CAMPING last week", [{"camp"}]),
        # filler words of the question never count
        ("What is it?", "what is it", [set()]),
        # CJK: every character a word
        ("记忆系统", "新的记忆\n系统", [{"记", "忆"}, {"系", "统"}]),
        ("", "anything", [set()]),
    ],
)
def test_matched_lines(question, text, expected):
    assert [set(x) for x in matched_lines(question_keys(question), text)] == expected
