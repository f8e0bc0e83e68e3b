"""An attempt's line is the very bytes `json` writes, whichever serializer made it.

`record_line` takes pydantic-core's serializer where it gives the same bytes as `json.dumps`
(compact, ensure_ascii=False, non-finite floats as null, lone surrogates backslash-escaped) and
`json` elsewhere; this compares it with that reference on drawn records.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.output.files import record_line


def reference(record: dict[str, Any]) -> tuple[bytes, dict[str, Any]]:
    """What `json` writes for the record, and the record a reader gets back."""

    def finite(value: Any) -> Any:
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        if isinstance(value, dict):
            return {k: finite(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [finite(v) for v in value]
        return value

    back = finite(record)
    text = json.dumps(back, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text + "\n").encode("utf-8", "backslashreplace"), back


# every code point, lone surrogates and control characters included
texts = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=12)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats()  # NaN, infinities, subnormals, every exponent
    | texts
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
records = st.dictionaries(texts, values, max_size=8)


@given(records)
@example({"nmse": 1e-05, "r2": 7.2e-09, "big": 1e16, "tiny": 5e-324, "x": 0.0001})
@example({"nmse": float("nan"), "nested": {"x": [float("inf"), -0.0]}})
@example({"raw_output": "lone \udc80 surrogate", "tactic": "e1 :\n\t\x00\x7f\u2028 ⟨x, hx⟩"})
@example({"text": 'NaN Infinity 0.00001 2e5 "None":'})
@example({"edge": [0.0001, 0.00010000000000000002, 9.999999999999999e-05, 1e16, 9999999999999998.0]})
@example({"digits": [0.00012345678901234567, 123.456e-3, 1.7976931348623157e308, -0.0, 5e-324]})
@example({"nested": [{"a": (1, 2.5e-4)}, [True, None, "x"]]})
def test_a_record_line_is_the_bytes_json_writes(record: dict[str, Any]) -> None:
    line, back = record_line(record)
    want_line, want_back = reference(record)
    assert line == want_line
    assert json.loads(line) == json.loads(want_line)
    assert json.dumps(back, allow_nan=True) == json.dumps(want_back, allow_nan=True)


@pytest.mark.parametrize(
    "by_key",
    [{None: 1, 2: 3, True: 4, 1.5: 5}, {None: 1}, {True: 1, False: 2}, {1e-05: 1, 2.5: 2}, {2: 3, "a": 1}],
)
def test_keys_are_written_as_json_writes_them(by_key: dict[Any, int]) -> None:
    record = {"item_id": "a", "sample_index": 0, "by_key": by_key}
    assert record_line(record)[0] == reference(record)[0]
