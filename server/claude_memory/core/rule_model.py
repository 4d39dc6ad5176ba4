"""The learned half of rule detection: a logistic regression over a sentence's features (its words and word pairs,
and which of the extractor's marks it carries), fitted by ``bench/fit_rules.py`` on the labelled prompts of
``bench/preferences`` and on chat that states no rule, and shipped as ``rule_weights.json`` beside this module.

The hand-written marks (always / never, "from now on", a convention ...) find the rules people word the way the
extractor's authors expected; each new writer words a third of theirs some other way ("integration tests hit a real
postgres", "go.mod changes need a sign-off"). The model scores the sentences the marks leave out, and a sentence it is
sure enough of counts as a rule. Pure: scoring is a sum of the weights of the features present.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Final

WEIGHTS_FILE: Final = "rule_weights.json"


@dataclass(frozen=True, slots=True)
class RuleModel:
    """Weights by feature name, a bias, and the probability from which a sentence is taken as a rule."""

    weights: dict[str, float]
    bias: float
    threshold: float
    features: int  # the version of the features it was fitted on (``insights.FEATURES``)

    def probability(self, features: Iterable[str]) -> float:
        z = self.bias + sum(self.weights.get(f, 0.0) for f in features)
        return 1.0 / (1.0 + math.exp(-z))

    def to_json(self) -> dict[str, object]:
        return {"features": self.features, "threshold": self.threshold, "bias": self.bias, "weights": self.weights}

    @staticmethod
    def from_json(data: dict[str, object]) -> RuleModel:
        weights = data["weights"]
        if not isinstance(weights, dict):
            raise ValueError("rule weights: 'weights' is not an object")
        return RuleModel(
            weights={str(k): float(v) for k, v in weights.items()},
            bias=float(str(data["bias"])),
            threshold=float(str(data["threshold"])),
            features=int(str(data["features"])),
        )


@functools.cache
def shipped() -> RuleModel:
    """The model shipped with the package (read once: it never changes while the process runs)."""
    text = resources.files("claude_memory.core").joinpath(WEIGHTS_FILE).read_text(encoding="utf-8")
    return RuleModel.from_json(json.loads(text))
