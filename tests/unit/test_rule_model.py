"""The learned half of rule detection (core/rule_model.py, insights.rule_features): the shipped weights load and were
fitted on today's features, a sentence no mark covers is a rule only when the model is sure enough of it, the
hand-written look-alike checks still hold, and the shipped weights score the labelled sets as bench/fit_rules.py
reported (bench/preference_eval.py has the figures per set)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_memory.core.insights import FEATURES, rule_features, rules
from claude_memory.core.rule_model import RuleModel, shipped

LABELLED = Path(__file__).resolve().parents[2] / "bench" / "preferences"
# the sets bench/fit_rules.py fits the shipped weights on: every labelled set but ``unseen``
FITTED = sorted(path.stem for path in LABELLED.glob("*.jsonl") if path.stem != "unseen")
UNMARKED = "integration tests hit a real postgres"  # a norm said with no mark the hand-written rules know


def _model(weights: dict[str, float], threshold: float = 0.8, features: int = FEATURES) -> RuleModel:
    return RuleModel(weights=weights, bias=-2.0, threshold=threshold, features=features)


def test_the_shipped_weights_load_and_were_fitted_on_these_features() -> None:
    model = shipped()
    assert model.features == FEATURES, "insights.rule_features changed: refit with bench/fit_rules.py"
    assert 0.5 <= model.threshold < 1.0
    assert len(model.weights) > 100
    assert RuleModel.from_json(json.loads(json.dumps(model.to_json()))) == model


def test_features_name_words_pairs_and_marks() -> None:
    found = rule_features("Always run `make lint` before you push")
    assert {"w:always", "w:<code>", "b:^_always", "b:push_$", "first:always", "m:always", "m:work"} <= found
    assert "m:qmark" in rule_features("should we use pnpm here?")
    assert "w:<path>" in rule_features("configs live in etc/app.toml")
    said = rule_features("we use pnpm here since yarn broke the lockfile")
    assert {"c:team", "c:justify", "cc:justify_team", "cf:team", "c:len:m"} <= said  # classes of words, their pairs
    assert "c:justify" in rule_features("pnpm, because yarn broke it") and "cf:other" in rule_features("pnpm please")
    alone = rule_features("we use pnpm here")
    assert {"p:none", "n:none"} <= alone and not any(f.startswith(("pc:", "nc:")) for f in alone)
    beside = rule_features("we use pnpm here", "Please tidy the lockfile.", "Because yarn broke it again.")
    assert {"pc:polite", "nc:justify", "nc:again"} <= beside and not {"p:none", "n:none"} & beside
    assert beside - alone == {f for f in beside if f[:3] in ("pc:", "nc:", "pm:", "nm:")}  # its own: as when alone


def test_the_model_sees_the_sentences_beside_the_one_it_is_asked_about() -> None:
    """A reason after a rule (or a "just this once" after a one-off) is in the next sentence."""
    after = _model({"w:postgres": 2.5, "nc:justify": 2.5})  # p = 0.62 alone, 0.95 with a reason after it
    assert rules(UNMARKED, after) == [] and rules(f"Hi there. {UNMARKED}.", after) == []
    assert [r.text for r in rules(f"{UNMARKED}. Because mocks hid a migration bug.", after)] == [f"{UNMARKED}."]
    before = _model({"w:postgres": 2.5, "pc:polite": 2.5})
    assert [r.text for r in rules(f"Please note. {UNMARKED}.", before)] == [f"{UNMARKED}."]


def test_an_unmarked_sentence_is_a_rule_only_when_the_model_is_sure_of_it() -> None:
    never = _model({})
    sure = _model({"w:postgres": 5.0})
    unsure = _model({"w:postgres": 2.5})
    assert rules(UNMARKED, never) == []
    assert [r.text for r in rules(UNMARKED, sure)] == [UNMARKED]
    assert rules(UNMARKED, unsure) == []  # p = 0.62 < 0.8
    assert rules(UNMARKED, _model({"w:postgres": 5.0}, features=FEATURES + 1)) == []  # fitted on other features
    assert not rules(UNMARKED, sure)[0].explicit


@pytest.mark.parametrize(
    "prompt",
    [
        "do integration tests hit a real postgres?",  # a question
        "for now integration tests hit a real postgres",  # the moment
        "No tests found for postgres.",  # what a run found
        "the linter says integration tests hit a real postgres",  # someone else's words
        "you ran the integration tests without postgres again",  # what someone did
        "check whether integration tests hit a real postgres",  # something to find out
        "make sure src/db/tests/conftest.py still starts a real postgres",  # one file deep in the tree: this task's
        "don't touch postgres.yml",  # a file this task leaves alone
    ],
)
def test_the_model_does_not_override_what_the_hand_written_checks_turn_down(prompt: str) -> None:
    assert rules(prompt, _model({"w:postgres": 9.0})) == []


def test_the_shipped_weights_find_the_labelled_rules_they_were_fitted_on() -> None:
    tp = found = wanted = 0
    for name in FITTED:
        for line in (LABELLED / f"{name}.jsonl").read_text().splitlines():
            row = json.loads(line)
            said, labelled = bool(rules(row["prompt"])), row["rule"] is not None
            tp, found, wanted = tp + (said and labelled), found + said, wanted + labelled
    # in sample over eighteen sets at 0.85, with the sentences beside each: 0.966 / 0.851 (0.968 / 0.788 at 0.9
    # without them; per set: bench/preference_eval.py)
    assert tp / found >= 0.95 and tp / wanted >= 0.83
