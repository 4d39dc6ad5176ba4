"""``claude-memory insights``, ``claude-memory prefs [show|pin|forget|unmark|rebuild]`` and ``claude-memory graduate``:
what the memory learned from the prompts and from use (:mod:`claude_memory.service.operations.learning`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Annotated, Any

import typer

from claude_memory.cli.common import EXIT_NOTHING, JsonOpt, fail
from claude_memory.client.transport import Transport
from claude_memory.service.projects import normalise_project_arg

TransportFactory = Callable[[typer.Context], AbstractContextManager[Transport]]
ProjectOpt = Annotated[str | None, typer.Option("--project", help="Only this project (a path).")]
AllOpt = Annotated[bool, typer.Option("--all", help="Superseded and forgotten preferences too.")]
IdArg = Annotated[str, typer.Argument(help="The preference's id (pref:…), or the citation of one of its statements.")]


def _preference_lines(p: dict[str, Any], *, evidence: bool = False) -> list[str]:
    flags = [f for f in (p["mark"] == "pin" and "pinned", p["mark"] == "forget" and "forgotten") if f]
    if p["status"] == "superseded":
        flags.append(f"superseded by {p['superseded_by']}")
    where = "every project" if p["scope"] is None else p["scope"]
    head = f"{'✗' if p['polarity'] == 'dont' else '✓'} {p['text']}"
    lines = [head, f"    {p['id']} · {where} · stated {p['count']}× · last {(p['last_seen'] or '?')[:10]}"
             + (f" · {', '.join(flags)}" if flags else "")]  # fmt: skip
    if p["supersedes"]:
        lines.append(f"    supersedes {', '.join(p['supersedes'])}")
    if evidence:
        lines += [f"    {(e['timestamp'] or '?')[:16]}  {e['citation'] or '':<10}  {e['text']}" for e in p["evidence"]]
    return lines


def _echo_json(data: object) -> None:
    typer.echo(json.dumps(data, ensure_ascii=False, indent=2))


def register(app: typer.Typer, transport: TransportFactory) -> None:
    """Add ``insights``, the ``prefs`` group and ``graduate``; ``transport`` is the app's."""

    def listing(ctx: typer.Context, project: str | None, show_all: bool) -> dict[str, Any]:
        params = {"project": normalise_project_arg(project) if project else None, "all": show_all}
        with transport(ctx) as t:
            data: dict[str, Any] = t.call("insights", params)
        return data

    @app.command("insights")
    def insights_cmd(
        ctx: typer.Context, project: ProjectOpt = None, show_all: AllOpt = False, as_json: JsonOpt = False
    ) -> None:
        """What your prompts say that outlives them: the preferences and rules you stated ("always use pnpm", "never
        push without the tests", "ruff instead of black"), each with every statement as cited evidence, and the topics
        you keep asking about. A later contrary statement supersedes an earlier one; a preference stated in several
        projects holds in all of them."""
        data = listing(ctx, project, show_all)
        if as_json:
            _echo_json(data)
            return
        if not data["preferences"] and not data["topics"]:
            fail("No preferences or repeated topics are remembered" + (" for that project." if project else "."),
                 EXIT_NOTHING)  # fmt: skip
        if data["preferences"]:
            typer.echo("Preferences and rules:")
            for p in data["preferences"]:
                typer.echo("\n".join("  " + line for line in _preference_lines(p)))
        if data["topics"]:
            typer.echo("Repeated topics:")
            for t in data["topics"]:
                cites = " ".join(e["citation"] for e in t["evidence"] if e["citation"])
                typer.echo(f"  {t['count']}× {t['key'][:70]}  {cites}")

    prefs = typer.Typer(
        help="Your stated preferences and rules: list them (no command), show one's evidence, pin, forget or unmark "
        "one, or read every prompt again.",
        invoke_without_command=True,
    )

    @prefs.callback()
    def prefs_list(
        ctx: typer.Context, project: ProjectOpt = None, show_all: AllOpt = False, as_json: JsonOpt = False
    ) -> None:
        """The preferences and rules you stated, pinned first, then the most often stated."""
        if ctx.invoked_subcommand is not None:
            return
        found = listing(ctx, project, show_all)["preferences"]
        if as_json:
            _echo_json(found)
            return
        if not found:
            fail("No preferences are remembered" + (" for that project." if project else "."), EXIT_NOTHING)
        for p in found:
            typer.echo("\n".join(_preference_lines(p)))

    @prefs.command("show")
    def show_cmd(ctx: typer.Context, insight_id: IdArg, as_json: JsonOpt = False) -> None:
        """One preference with every statement of it (its evidence), cited."""
        with transport(ctx) as t:
            data = t.call("insight", {"id": insight_id})
        if as_json:
            _echo_json(data)
        elif data["kind"] == "topic":
            typer.echo(f"{data['text']} ({data['count']}×)")
            for e in data["evidence"]:
                typer.echo(f"    {(e['timestamp'] or '?')[:16]}  {e['citation'] or '':<10}  {e['text']}")
        else:
            typer.echo("\n".join(_preference_lines(data, evidence=True)))

    def mark(ctx: typer.Context, insight_id: str, what: str, as_json: bool) -> None:
        with transport(ctx) as t:
            data = t.call("insight_mark", {"id": insight_id, "mark": what})
        done = {"pin": "Pinned", "forget": "Forgotten (its statements stay in memory)", "none": "Unmarked"}[what]
        _echo_json(data) if as_json else typer.echo(f"{done}: {data['text']}")

    @prefs.command("pin")
    def pin_cmd(ctx: typer.Context, insight_id: IdArg, as_json: JsonOpt = False) -> None:
        """Always list this preference first and give it at every SessionStart of its project."""
        mark(ctx, insight_id, "pin", as_json)

    @prefs.command("forget")
    def forget_cmd(ctx: typer.Context, insight_id: IdArg, as_json: JsonOpt = False) -> None:
        """Never list nor give this preference again (the prompts that stated it stay in memory: `claude-memory
        forget` removes those)."""
        mark(ctx, insight_id, "forget", as_json)

    @prefs.command("unmark")
    def unmark_cmd(ctx: typer.Context, insight_id: IdArg, as_json: JsonOpt = False) -> None:
        """Clear a pin or a forget."""
        mark(ctx, insight_id, "none", as_json)

    @prefs.command("rebuild")
    def rebuild_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
        """Read every stored prompt again for preferences and topics (they are derived: the same prompts give the
        same insights; pins and forgets are kept)."""
        with transport(ctx) as t:
            data = t.call("insights_rebuild", {})
        _echo_json(data) if as_json else typer.echo(f"{data['prompts']} prompts read.")

    app.add_typer(prefs, name="prefs")

    @app.command("graduate")
    def graduate_cmd(
        ctx: typer.Context,
        force: Annotated[
            bool, typer.Option("--force", help="Evaluate memories evaluated within the hour too.")
        ] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Run the graduation worker now (the service runs it every 5 minutes): memories that keep being used climb
        from L0 to L4 by the seed's promotion table (accesses, confidence, sessions, recency). `stats` shows the
        levels."""
        with transport(ctx) as t:
            data = t.call("graduate", {"ignore_cooldown": force})
        if as_json:
            _echo_json(data)
            return
        moved = ", ".join(f"{n} from {lv}" for lv, n in sorted(data["by_level"].items())) or "none"
        typer.echo(f"{data['evaluated']} memories evaluated; {data['graduated']} promoted ({moved}).")
