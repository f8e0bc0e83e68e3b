"""Laws of `relative_path_problem`: what it lets through is already a normalised relative POSIX
path, so the check needs no pathlib round trip per index row."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_lsrb.core.paths import relative_path_problem

# Path-like text: the characters that matter to normalisation, often, and any others now and then.
_PATHS = st.text(alphabet=st.sampled_from([*"ab./~\\", "\x00", "é", " "]), max_size=12) | st.text(max_size=20)


@given(_PATHS)
@example("a//b")
@example("a/./b")
@example("a/")
@example("//a")
@example("./a")
@example(".")
def test_accepted_paths_are_their_own_posix_path(text: str) -> None:
    if relative_path_problem(text) is None:
        path = PurePosixPath(text)
        assert str(path) == text
        assert not path.is_absolute() and ".." not in path.parts
