"""How the CLI shows an import: the report as text, and progress bars on stderr."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn


def report_text(data: dict[str, Any], console: Console) -> None:
    files, events, skipped = data["files"], data["events"], data["skipped_lines"]
    console.print(
        f"Read {files['read']} of {files['found']} transcript files ({files['unchanged']} unchanged) "
        f"in {data['seconds']:.1f} s."
    )
    console.print(f"New events: {events['new']} ({events['duplicates']} already stored).")
    for kind, count in events["new_by_type"].items():
        console.print(f"  {kind:<16} {count}")
    console.print(f"Embedded for semantic search: {events['embedded']}.")
    console.print(f"Skipped lines: {skipped['total']}")
    for reason, count in skipped["by_reason"].items():
        console.print(f"  {count:>6}  {reason}")
    for issue in skipped["first"][:10]:
        console.print(f"          {issue['path']}:{issue['line']}: {issue['reason']}")
    for reason, count in files["skipped"].items():
        console.print(f"Files not read: {count} ({reason})")
    privacy = data["privacy"]
    console.print(
        f"Secrets masked: {privacy['secrets_masked']}; private sections removed: {privacy['private_sections_removed']}."
    )
    if privacy.get("secrets_by_kind"):
        console.print("  by kind: " + ", ".join(f"{k} {n}" for k, n in privacy["secrets_by_kind"].items()))
    if privacy["unclosed_private_tags"]:
        console.print("Warning: some text had an unclosed <private> tag; that text was stored as written.")
    for note in data["notes"]:
        console.print(note)


class Bars:
    """Progress bars on stderr, one stage at a time: the import in bytes, the model's download in bytes (the
    first time), then the embedding in events."""

    def __init__(self, err: Console) -> None:
        self.err = err
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def start(self, what: str, total: int) -> None:
        self.stop()
        if what in ("import", "download"):
            label = TextColumn("Importing" if what == "import" else "Downloading the embedding model")
            columns: tuple[Any, ...] = (label, BarColumn(), DownloadColumn(), TimeRemainingColumn())
        else:
            columns = (TextColumn("Embedding"), BarColumn(), TextColumn("{task.completed}/{task.total} events"))
        self.bar = Progress(*columns, console=self.err, transient=True)
        self.bar.start()
        self.task = self.bar.add_task(what, total=total)

    def advance(self, n: int) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task, n)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
        self.bar = self.task = None
