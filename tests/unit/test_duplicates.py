"""Near-duplicate collapse (core/duplicates.py): the same output is one, a different fact is not."""

from __future__ import annotations

from claude_memory.core.duplicates import COMPARED_CHARS, fold, normalise


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


def test_normalise_masks_what_changes_between_runs_and_nothing_else() -> None:
    text = (
        "\u00a0 Run 3F2504E0-4F89-11D3-9A0C-0305E82C3301 at 2026-03-01 10:00:07, then 10:00:09;\ttook 12.5 ms and 3s,"
        " commit a1b2c3d4e5 in /tmp/pytest-of-me/x1.log\n\n"
        "deadbeefcafe xa1b2c3d4e5 ab12 1234567 12345678 4 kids 2026-03-01 \u2028end "
    )
    assert normalise(text) == (
        "run # at #, then #; took # and #, commit # in # deadbeefcafe xa1b2c3d4e5 ab12 1234567 # 4 kids 2026-03-01 end"
    )


def test_normalise_keeps_the_first_characters_only() -> None:
    assert normalise("word " * 1_000) == ("word " * 400)[:COMPARED_CHARS]
