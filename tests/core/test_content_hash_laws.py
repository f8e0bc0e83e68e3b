"""core.rows.content_hash: SHA-256 of the row's canonical JSON, i.e. of
`json.dumps(model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)`
in UTF-8, whichever encoder spells it (selected_rows_hash and run.json depend on every byte)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from pytest_lsrb.core.rows import content_hash
from pytest_lsrb.tactic.rows import TacticRow


class Row(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    count: int
    tags: list[str] = []


def reference(model: BaseModel) -> str:
    data = model.model_dump(mode="json")
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Lone surrogates never reach a row (core.rows refuses them), so none are drawn.
TEXT = st.text(st.characters(exclude_categories=["Cs"]))
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | TEXT
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
EXTRAS = st.dictionaries(TEXT.filter(lambda key: key not in Row.model_fields), JSON, max_size=5)


@given(name=TEXT, count=st.integers(), tags=st.lists(TEXT, max_size=4), extras=EXTRAS)
@example(name='\x00\x1f\x7f"\\\u2028\u00e9\U0001f642', count=0, tags=["\n", "\t"], extras={})
@example(name="", count=2**70, tags=[], extras={"Z": True, "a": None, "\u00e9": -(2**63)})
@example(name="a", count=-1, tags=[], extras={"f": 1e16, "g": 1e-05, "h": float("nan")})
@example(name="a", count=1, tags=[], extras={"nested": {"b": 1, "a": [2, "x"]}, "list": [1, "x"]})
@example(name="a", count=1, tags=[], extras={"bool_in_list": [True], "empty": [], "obj": {}})
def test_content_hash_is_sha256_of_the_canonical_json(
    name: str, count: int, tags: list[str], extras: dict[str, Any]
) -> None:
    row = Row.model_validate({"name": name, "count": count, "tags": tags, **extras})
    assert content_hash(row) == reference(row)


def test_an_index_row_hashes_as_before() -> None:
    """Pinned: the hash of one index row as every earlier version computed it (runs resume and
    gates compare on it)."""
    row = TacticRow.model_validate(
        {
            "item_id": "nat_add_zero",
            "repo_remote": "https://github.com/o/r",
            "repo_branch": "main",
            "repo_commit": "0" * 40,
            "repo_lean_version": "v4.22.0",
            "path": "A.lean",
            "start_line": 3,
            "start_column": 2,
            "end_line": 3,
            "end_column": 7,
            "goal_text": "n : Nat\n⊢ n + 0 = n",
            "tags": ["nat", "arith"],
            "sorry_source": "lean4",
        }
    )
    assert content_hash(row) == reference(row) == PINNED


PINNED = "4ed6785671cc8125aa5c0947982e01d92d7832cd8c9aaa9957fa05ec4abb3ff6"  # pytest_lsrb at 4d1d4cd
