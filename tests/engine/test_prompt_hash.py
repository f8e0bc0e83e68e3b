"""The prompt hash is SHA-256 of the prompt as `json.dumps` writes it: the hand-spelled canonical
text must stay that, character for character, whatever the messages hold."""

from __future__ import annotations

import hashlib
import json

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.adapters.base import Message
from pytest_lsrb.engine.prompt import prompt_hash

# Any text pydantic lets into a row (no lone surrogates), with JSON's special characters often.
_TEXT = st.text(st.characters(exclude_categories=["Cs"])) | st.text(st.sampled_from('"\\\n\t\x00\x7fé⊢ '))
_MESSAGES = st.lists(st.builds(Message, st.sampled_from(["system", "user", "assistant"]), _TEXT), max_size=3)


@given(_MESSAGES)
@example([Message("system", ""), Message("user", 'a "quoted"\\ goal\n⊢ x\u2028')])
def test_prompt_hash_is_the_hash_of_json_dumps(messages: list[Message]) -> None:
    reference = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
    assert prompt_hash(tuple(messages)) == hashlib.sha256(reference.encode("utf-8")).hexdigest()
