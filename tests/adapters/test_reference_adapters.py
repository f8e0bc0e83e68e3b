"""SorryDB's deterministic baselines as adapters (adapters/reference.py): no model, fixed tactics."""

from __future__ import annotations

from pathlib import Path

from pytest_lsrb import api
from pytest_lsrb.adapters import ADAPTERS, AdapterConfig, GenerationRequest, SamplingConfig, create_adapter
from pytest_lsrb.adapters.reference import MULTI_TACTIC


def _request(sample_index: int) -> GenerationRequest:
    return GenerationRequest(
        messages=(), seed=0, sampling=SamplingConfig(), context={"sample_index": sample_index}
    )


def test_the_tactics_list_is_sorrydbs_and_each_sample_answers_one() -> None:
    # sorrydb/cli/run_morphcloud_local.py DEFAULT_TACTICS at 71959ed, in SorryDB's order
    sorrydb_default_tactics = (
        *("rfl", "trivial", "simp", "simp_all", "exact?", "grind", "ring", "norm_num"),
        *("omega", "linarith", "nlinarith", "aesop"),
    )
    assert sorrydb_default_tactics == MULTI_TACTIC
    adapter = create_adapter(AdapterConfig(name="sorrydb-tactics"))
    assert [adapter.generate(_request(i)).text for i in range(12)] == list(MULTI_TACTIC)
    assert adapter.generate(_request(12)).text == "rfl"
    assert adapter.identity()["protocol"] == "SorryDB/SorryDB:multi_tactic@71959ed"
    rfl = create_adapter(AdapterConfig(name="sorrydb-rfl"))
    assert {rfl.generate(_request(i)).text for i in range(3)} == {"rfl"}
    assert {"sorrydb-tactics", "sorrydb-rfl"} <= set(ADAPTERS)


def test_a_run_answers_every_tactic_once_and_names_its_protocol(tmp_path: Path) -> None:
    run = api.run(
        "goal_to_tactic_proposal_v1",
        adapter="sorrydb-tactics",
        samples=12,
        max_items=2,
        output_dir=str(tmp_path),
        outcome="record",
        pytest_args=["-q"],
    )
    by_item: dict[str, list[str]] = {}
    for record in sorted(run.records, key=lambda r: (r["item_id"], r["sample_index"])):
        by_item.setdefault(record["item_id"], []).append(record["tactic"])
        assert record["adapter"] == "sorrydb-tactics"
        assert record["model"] == "sorrydb/multi_tactic@71959ed"
    assert len(by_item) == 2
    assert all(tactics == list(MULTI_TACTIC) for tactics in by_item.values())
    assert run.header["config"]["adapter"] == "sorrydb-tactics"  # the protocol is the run's identity
