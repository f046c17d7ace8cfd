import pytest

from annotation.ingest.words import WordSpec, check_times_within, parse_word_list, split_transcript


def test_split_keeps_attached_punctuation_and_drops_bare_punctuation():
    assert [w.text for w in split_transcript("Yes — I said “no”, didn't I?")] == [
        "Yes",
        "I",
        "said",
        "“no”,",
        "didn't",
        "I?",
    ]


def test_word_list_of_strings_or_objects():
    words = parse_word_list([*["Hello,", {"text": "world", "start": 0.1, "end": 0.4}][:1], "world"], "Hello, world")
    assert words == [WordSpec("Hello,"), WordSpec("world")]


def test_word_list_may_leave_out_punctuation_and_case():
    assert len(parse_word_list(["hello", "WORLD"], "Hello, world!")) == 2


def test_word_list_for_a_language_written_without_spaces():
    words = parse_word_list(["我", "喜欢", "音乐"], "我喜欢音乐。")
    assert [w.text for w in words] == ["我", "喜欢", "音乐"]


@pytest.mark.parametrize(
    ("words", "transcript", "reason"),
    [
        (["the", "dog"], "the cat", "word 1 is 'dog', the transcript has 'cat' there"),
        (["the"], "the cat", "it ends before 'cat'"),
        (["the", "cat", "sat"], "the cat", "word 2 is 'sat', the transcript has 'the end of the transcript' there"),
        ([], "the cat", "must be a non-empty list"),
        ("the cat", "the cat", "must be a non-empty list"),
        (["the", ","], "the ,", "word 1 (',') is punctuation only"),
        ([{"text": "a", "start": 0.1}], "a", "has a start without an end"),
        ([{"text": "a", "start": 0.5, "end": 0.5}], "a", "ends at 0.5 s, not after its start at 0.5 s"),
        ([{"text": "a", "start": -1, "end": 0.5}], "a", "start is negative"),
        ([{"text": "a", "start": "0", "end": 0.5}], "a", "start must be a number of seconds"),
        ([{"text": "a", "start": 0.1, "end": 0.2}, "b"], "a b", "give start and end times for every word or for none"),
    ],
)
def test_bad_word_lists_say_why(words, transcript, reason):
    with pytest.raises(ValueError, match=None) as caught:
        parse_word_list(words, transcript)
    assert reason in str(caught.value)


def test_times_past_the_end_are_reported():
    words = [WordSpec("a", 0.0, 0.5), WordSpec("b", 0.5, 1.2)]
    assert check_times_within(words, 1.19) is None  # within the 20 ms tolerance
    assert check_times_within(words, 1.0) == "word 1 ('b') ends at 1.2 s, past the clip's end at 1.000 s"
