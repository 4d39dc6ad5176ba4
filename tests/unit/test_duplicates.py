"""Near-duplicate collapse (core/duplicates.py): the same output is one, a different fact is not."""

from __future__ import annotations

from claude_memory.core.duplicates import fold


def test_the_same_text_and_the_same_output_with_other_ids_and_times_fold() -> None:
    run = "Ran the suite in {t}s at 2026-03-0{d}T10:00:00Z, build {h}\n" + "all 412 tests passed\n" * 30
    texts = [
        "Bash: echo hello-from-mock",
        "Bash:  echo  hello-from-mock ",
        run.format(t=3.2, d=1, h="a1b2c3d4e5"),
        "something else entirely",
        run.format(t=4.8, d=2, h="ffee0011aa"),
    ]
    assert fold(texts) == [[0, 1], [2, 4], [3]]


def test_short_texts_that_differ_by_a_number_or_a_word_stay_apart() -> None:
    assert fold(["common words about the build number 1", "common words about the build number 2"]) == [[0], [1]]
    assert fold(["use pnpm", "use npm"]) == [[0], [1]]
