"""Local JSON recovery: never raises, never rewrites valid JSON, recovers wrapped JSON."""

import json

from hypothesis import given
from hypothesis import strategies as st

from core.guard.local_repair import looks_truncated, parse_json_locally

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
objects = st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=4)


@given(st.text())
def test_never_raises(text):
    result = parse_json_locally(text)
    assert result.ok in (True, False)


@given(json_values)
def test_valid_json_comes_back_unchanged_with_no_fix(value):
    result = parse_json_locally(json.dumps(value, ensure_ascii=False))
    assert result.ok and result.value == value and result.fixes == []


@given(
    objects,
    st.sampled_from(["", "以下です:\n", "Here you go. "]),
    st.sampled_from(["", "\n以上。", " Thanks!"]),
)
def test_object_wrapped_in_prose_or_fence_is_recovered(value, before, after):
    body = json.dumps(value, ensure_ascii=False)
    for raw in (f"{before}{body}{after}", f"{before}```json\n{body}\n```{after}"):
        result = parse_json_locally(raw)
        assert result.ok and result.value == value


def test_commas_and_slashes_inside_strings_are_left_alone():
    raw = '{"url": "http://example.com/a", "s": "a,}", "t": [1,],}'
    result = parse_json_locally(raw)
    assert result.ok and result.value == {"url": "http://example.com/a", "s": "a,}", "t": [1]}
    assert result.fixes == ["trailing_commas"]


def test_truncation_is_detected_not_closed():
    raw = '{"a": {"b": [1, 2'
    result = parse_json_locally(raw)
    assert not result.ok and result.truncated
    assert looks_truncated(raw) and not looks_truncated('{"a": 1} trailing') and not looks_truncated("plain")


def test_a_fence_inside_a_string_does_not_close_the_code_fence():
    """CI drew {"": "```"} in a fence: the fence's first closing ``` is inside the string."""
    result = parse_json_locally('```json\n{"": "```"}\n```')
    assert result.ok and result.value == {"": "```"} and result.fixes == ["code_fence"]
