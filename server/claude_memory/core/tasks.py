"""Tasks that survive sessions (seed §10, §11): Claude Code's own task tools read as task entities whose state is a
fold of task events. Pure: no I/O; the service's projector (``service/tasks.py``) feeds it the stored tool calls in
order and stores what it emits.

* **Reading the tools** (:func:`task_op`): ``TodoWrite`` (a whole to-do list each time), ``TaskCreate`` (a task, with
  the id Claude Code gave it), ``TaskUpdate`` (that id's status, subject, blockers). Claude Code's ``completed`` is
  ``done``, its ``deleted`` is ``cancelled``.
* **Identity** (:class:`Board`): a task is ``task:{project}:{key}`` with ``key`` the seed's entity normalisation of
  its title (§3.5). A title is the same task as an open task of the project when its canonical key or an alias is the
  same, or when rapidfuzz finds it alone at ≥ 0.92 (next best ≥ 0.03 behind): the reworded title becomes an alias.
  A match at ≥ 0.75 is kept as a suggestion on the new task, never merged. Rapidfuzz looks at the project's
  :data:`MATCH_WINDOW` open tasks most recently opened or moved (a key or an alias finds any open task): a fold
  costs the same per call however many stale tasks were left open over the years. Claude Code's task ids map to the task
  they created, per session.
* **Transitions** (§11.1): pending → in_progress | blocked | cancelled; in_progress → blocked | done | cancelled;
  blocked → in_progress | done | cancelled; done and cancelled are final. A request outside these is recorded as
  ``task_transition_rejected`` and not applied. **pending → done is never applied directly.** Claude Code's lists do
  jump from ``pending`` to ``completed`` (the work was done between two writes of the list): that is read as
  started, then finished, two events citing the same call. A task first seen ``completed`` is created
  ``in_progress`` and then finished. An item that disappears from the same session's next list without being
  completed was dropped from the plan: ``cancelled``. A later session's list says nothing about the tasks it does
  not name: they stay open.
* **Blockers** (§11.4): ``TaskUpdate.addBlockedBy`` names tasks; words in a task's text ("blocked on", "waiting for",
  "depends on", an issue URL or key) are resolved: an artifact for a URL / ``ABC-123`` / ``owner/repo#12``, a task on
  a strict title match, else a condition holding the candidates. Never a stub task. A task blocked with no blocker
  named gets the condition "Unknown blocker for: <title>" (a placeholder). Blocked ⇒ at least one blocker; done ⇒
  none.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from rapidfuzz import fuzz, process

TASK_TOOLS: Final = frozenset({"TodoWrite", "TaskCreate", "TaskUpdate"})
STATUSES: Final = ("pending", "in_progress", "blocked", "done", "cancelled")
OPEN: Final = frozenset({"pending", "in_progress", "blocked"})
ALLOWED: Final[dict[str, frozenset[str]]] = {
    "pending": frozenset({"in_progress", "blocked", "cancelled"}),
    "in_progress": frozenset({"blocked", "done", "cancelled"}),
    "blocked": frozenset({"in_progress", "done", "cancelled"}),
    "done": frozenset(),
    "cancelled": frozenset(),
}
SAME: Final = 0.92  # a title this similar, alone (GAP ahead of the next), is the same task
GAP: Final = 0.03
SUGGEST: Final = 0.75  # ... this similar: a suggestion kept on the task, never merged
MATCH_WINDOW: Final = 200  # open tasks of a project a reworded title is compared with, the latest moved first
BOARD_FORMAT: Final = 2  # of Board.dump: a board dumped in another format is folded again from the calls
MAX_TEXT: Final = 2_000  # of a task's description kept
_STATUS_OF: Final = {"pending": "pending", "in_progress": "in_progress", "completed": "done", "deleted": "cancelled"}
_NOT_WORD: Final = re.compile(r"[^\w\s]|_", re.UNICODE)
_URL: Final = re.compile(r"https?://[^\s)\]>\"';,]+")
_JIRA: Final = re.compile(r"\b[A-Z][A-Z0-9]+-\d+\b")
_GH: Final = re.compile(r"\b([\w.-]+/[\w.-]+)#(\d+)\b")
_BLOCKED_WORDS: Final = re.compile(
    r"\b(?:blocked (?:on|by)|waiting (?:for|on)|depends on|pending on|needs? to wait for)\s+(?P<what>[^.;\n]{3,120})",
    re.IGNORECASE,
)

# The relations the board creates, by (source type, relation, target type) (seed §10.2): any other is refused.
VALID_EDGES: Final = frozenset(
    {("task", "blocked_by", t) for t in ("task", "condition", "artifact")}
    | {("task", "blocked_by_suggested", t) for t in ("task", "condition", "artifact")}
    | {("condition", "resolves_to", "task")}
)

EventType = Literal[
    "task_created",
    "task_status_changed",
    "task_priority_changed",
    "task_blockers_set",
    "task_transition_rejected",
    "condition_resolved_to",
]


def normalize(text: str) -> str:
    """The seed's entity normalisation (§3.5): NFKC, lowercase, letters/numbers/spaces only, spaces → ``_``."""
    folded = _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).lower())
    return "_".join(folded.split())


def task_key(project: str | None, title: str) -> str:
    return f"task:{project or 'default'}:{normalize(title)}"


def condition_key(project: str | None, text: str) -> str:
    return f"cond:{project or 'default'}:{normalize(text)}"


def artifact_key(text: str) -> tuple[str, str] | None:
    """``(key, artifact type)`` for a URL, an issue key or a GitHub issue; None for other text."""
    text = text.strip()
    if _URL.fullmatch(text):
        return f"art:url:{hashlib.sha1(text.encode()).hexdigest()[:12]}", "url"
    if _JIRA.fullmatch(text):
        return f"art:jira:{text.lower()}", "jira"
    found = _GH.fullmatch(text)
    if found:
        return f"art:gh_issue:{found[1].lower()}:{found[2]}", "github_issue"
    return None


# ---------------------------------------------------------------------- reading the tools


def task_op(name: str, tool_input: Any, structured: Any, *, failed: bool) -> dict[str, Any] | None:
    """What a task tool call said, normalised (stored with its event), or None."""
    if failed or name not in TASK_TOOLS or not isinstance(tool_input, dict):
        return None
    if name == "TodoWrite":
        items = tool_input.get("todos")
        todos = [
            {"title": str(t["content"]).strip(), "status": _STATUS_OF.get(str(t.get("status")), "pending")}
            for t in (items if isinstance(items, list) else [])
            if isinstance(t, dict) and isinstance(t.get("content"), str) and t["content"].strip()
        ]
        return {"kind": "list", "todos": todos}
    result = structured if isinstance(structured, dict) else {}
    if name == "TaskCreate":
        subject = tool_input.get("subject")
        if not isinstance(subject, str) or not subject.strip():
            return None
        task = result.get("task")
        created: dict[str, Any] = task if isinstance(task, dict) else {}
        description = created.get("description", tool_input.get("description"))
        return {
            "kind": "create",
            "id": str(created["id"]) if created.get("id") is not None else None,
            "title": subject.strip(),
            "description": str(description)[:MAX_TEXT] if isinstance(description, str) else "",
        }
    if result.get("success") is False:
        return None
    task_id = tool_input.get("taskId")
    if task_id is None:
        return None
    op: dict[str, Any] = {"kind": "update", "id": str(task_id)}
    if isinstance(tool_input.get("status"), str) and tool_input["status"] in _STATUS_OF:
        op["status"] = _STATUS_OF[tool_input["status"]]
    if isinstance(tool_input.get("subject"), str) and tool_input["subject"].strip():
        op["title"] = tool_input["subject"].strip()
    if isinstance(tool_input.get("description"), str):
        op["description"] = tool_input["description"][:MAX_TEXT]
    named = tool_input.get("addBlockedBy")
    blocked_by = [str(b) for b in (named if isinstance(named, list) else []) if isinstance(b, str | int)]
    if blocked_by:
        op["blocked_by"] = blocked_by
    return op


def blocker_texts(text: str) -> list[str]:
    """Blockers named in free text: issue URLs and keys, and what follows "blocked on", "waiting for", "depends
    on"."""
    found = [m.group(0).rstrip(".,;:!?") for m in _URL.finditer(text)]
    found += [f"{m[1]}#{m[2]}" for m in _GH.finditer(text)]
    found += [m.group(0) for m in _JIRA.finditer(text)]
    for m in _BLOCKED_WORDS.finditer(text):
        what = m.group("what").strip().rstrip(".,")
        if not any(what in f or f in what for f in found):
            found.append(what)
    return list(dict.fromkeys(found))


# ---------------------------------------------------------------------- the board


@dataclass
class Entity:
    """A task, a condition or an artifact; ``state`` is the fold of its events."""

    id: str
    type: Literal["task", "condition", "artifact"]
    title: str
    project: str | None
    state: dict[str, Any] = field(default_factory=dict)
    aliases: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class TaskEvent:
    type: EventType
    task_id: str
    payload: dict[str, Any]

    def dedupe_key(self, session_id: str, source: int) -> str:
        """Seed §3.5: the type, the task, the session and the payload (which cites the source call)."""
        body = json.dumps({**self.payload, "source": source}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(f"{self.type}:{self.task_id}:{session_id}:{body}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Call:
    """A stored task tool call, as the projector hands it over."""

    event_id: int
    session_id: str
    agent_id: str | None
    project: str | None
    op: dict[str, Any]
    words: str = ""  # the user's and Claude's words just before the call: blockers named there are suggested


class Board:
    """Every entity and what links them; :meth:`apply` folds one call in and returns the events it made."""

    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.aliases: dict[str, str] = {}  # alias key -> entity id
        self.claude_ids: dict[tuple[str, str], str] = {}  # (session, Claude Code's task id) -> task
        self.lists: dict[tuple[str, str], dict[str, str]] = {}  # (session, agent) -> its last list: title -> task
        self.edges: set[tuple[str, str, str]] = set()  # (source, relation, target)
        self._open: dict[str | None, dict[str, str]] = {}  # project -> its open tasks: id -> title (for matching)
        self._open_lower: dict[str | None, dict[str, str]] = {}  # the same titles in lower case, made once
        # project -> its conditions a new task may resolve (neither resolved nor placeholders), by entity number
        self._unresolved: dict[str | None, dict[str, int]] = {}
        self._number: dict[str, int] = {}  # entity id -> its place in ``entities`` (the order conditions are tried)

    # ------------------------------------------------------------------ kept between processes

    def dump(self) -> dict[str, Any]:
        """Everything the board holds, as JSON values, in the orders it holds it: :meth:`load` gives a board that
        folds later calls exactly as this one would."""
        return {
            "format": BOARD_FORMAT,
            "entities": [
                [e.id, e.type, e.title, e.project, e.state, sorted(e.aliases)] for e in self.entities.values()
            ],
            "aliases": list(self.aliases.items()),
            "claude_ids": [[session, claude_id, task] for (session, claude_id), task in self.claude_ids.items()],
            "lists": [[session, agent, list(items.items())] for (session, agent), items in self.lists.items()],
            "edges": sorted(self.edges),
            "open": [[project, list(titles.items())] for project, titles in self._open.items()],
        }

    @classmethod
    def load(cls, dumped: dict[str, Any]) -> Board:
        """The board :meth:`dump` gave; ValueError for another format."""
        if dumped.get("format") != BOARD_FORMAT:
            found = dumped.get("format")
            raise ValueError(f"A task board in format {found!r} cannot be read (this version reads {BOARD_FORMAT}).")
        board = cls()
        for entity_id, kind, title, project, state, aliases in dumped["entities"]:
            board.entities[entity_id] = Entity(entity_id, kind, title, project, state, set(aliases))
            board._number[entity_id] = len(board._number)
        board.aliases = dict(dumped["aliases"])
        board.claude_ids = {(session, claude_id): task for session, claude_id, task in dumped["claude_ids"]}
        board.lists = {(session, agent): dict(items) for session, agent, items in dumped["lists"]}
        board.edges = {(src, rel, dst) for src, rel, dst in dumped["edges"]}
        for project, titles in dumped["open"]:
            board._open[project] = dict(titles)
            board._open_lower[project] = {task: title.lower() for task, title in titles}
        for entity in board.entities.values():
            if entity.type == "condition":
                board._waits(entity)
        return board

    # ------------------------------------------------------------------ identity

    def _opened(self, task: Entity) -> None:
        """Keep the per-project index of open tasks in step with ``task``'s status: an open task moves to its end
        (the index is in the order the tasks were last opened or moved)."""
        titles = self._open.setdefault(task.project, {})
        lowered = self._open_lower.setdefault(task.project, {})
        titles.pop(task.id, None)
        lowered.pop(task.id, None)
        if task.state.get("status") in OPEN:
            titles[task.id] = task.title
            lowered[task.id] = task.title.lower()

    def match(self, project: str | None, title: str) -> tuple[Entity | None, list[str]]:
        """The open task of the project this title names (or None), and the suggested ones. Similarity is the best
        of rapidfuzz's ratio and token-set ratio (a reworded title that keeps or adds words scores high), among the
        project's :data:`MATCH_WINDOW` latest moved open tasks."""
        key = task_key(project, title)
        found = self.entities.get(self.aliases.get(key, key))
        if found is not None and found.type == "task" and found.state.get("status") in OPEN:
            return found, []
        titles, lowered, low = self._open.get(project, {}), self._open_lower.get(project, {}), title.lower()
        if len(lowered) > MATCH_WINDOW:
            lowered = dict(itertools.islice(reversed(lowered.items()), MATCH_WINDOW))
        # below SUGGEST a candidate is neither suggested nor close enough to stop a match (SUGGEST + GAP < SAME)
        near = {c[2] for scorer in (fuzz.ratio, fuzz.token_set_ratio)
                for c in process.extract(low, lowered, scorer=scorer, limit=8, score_cutoff=SUGGEST * 100)}  # fmt: skip
        scored = sorted(
            ((max(fuzz.ratio(low, lowered[i]), fuzz.token_set_ratio(title, titles[i])) / 100, i) for i in near),
            reverse=True,
        )  # fmt: skip
        if scored and scored[0][0] >= SAME and (len(scored) == 1 or scored[0][0] - scored[1][0] >= GAP):
            return self.entities[scored[0][1]], []
        return None, [i for s, i in scored[:5] if s >= SUGGEST]

    def _entity(
        self, key: str, kind: Literal["task", "condition", "artifact"], title: str, project: str | None
    ) -> Entity:
        found = self.entities.get(self.aliases.get(key, key))
        if found is None:
            found = self.entities[key] = Entity(key, kind, title, project, aliases={key})
            self._number[key] = len(self._number)
            self.aliases[key] = key
        return found

    def _condition_state(self, condition: Entity, state: dict[str, Any]) -> None:
        condition.state = state
        self._waits(condition)

    def _waits(self, condition: Entity) -> None:
        """Keep the index of the conditions a new task may resolve in step with ``condition``'s state."""
        waiting = self._unresolved.setdefault(condition.project, {})
        state = condition.state
        if condition.type != "condition" or state.get("resolved") or state.get("auto_placeholder"):
            waiting.pop(condition.id, None)
        else:
            waiting.setdefault(condition.id, self._number[condition.id])

    # ------------------------------------------------------------------ calls

    def apply(self, call: Call) -> list[TaskEvent]:
        kind = call.op.get("kind")
        if kind == "correction":
            return self._correct(call)
        if kind == "list":
            return self._list(call)
        if kind == "create":
            return self._create(call)
        if kind == "update":
            return self._update(call)
        return []

    def _correct(self, call: Call) -> list[TaskEvent]:
        """A person's correction: ``close`` (done), ``cancel``, or ``merge`` (the task is the same as ``into``: its
        titles and Claude Code ids lead there from now on, and it is cancelled as merged)."""
        op = call.op
        task = self.entities.get(self.aliases.get(str(op["id"]), str(op["id"])))
        if task is None or task.type != "task":
            return []
        if op["action"] == "merge":
            into = self.entities.get(self.aliases.get(str(op["into"]), str(op["into"])))
            if into is None or into.type != "task" or into.id == task.id:
                return []
            for alias in task.aliases:
                self.aliases[alias] = into.id
            into.aliases |= task.aliases
            self.claude_ids = {k: into.id if v == task.id else v for k, v in self.claude_ids.items()}
            self.lists = {
                w: {t: into.id if v == task.id else v for t, v in items.items()} for w, items in self.lists.items()
            }
            return self._move(task, "cancelled", call, reason=f"merged into {into.id} by the user")
        target = "done" if op["action"] == "close" else "cancelled"
        return self._move(task, target, call, reason=f"{'closed' if target == 'done' else 'cancelled'} by the user")

    def _create(self, call: Call) -> list[TaskEvent]:
        op = call.op
        task, events = self._ensure(call, str(op["title"]), "pending", str(op.get("description") or ""))
        if op.get("id") is not None:
            self.claude_ids[(call.session_id, str(op["id"]))] = task.id
        return events + self._blockers_from_text(call, task)

    def _update(self, call: Call) -> list[TaskEvent]:
        op = call.op
        task_id = self.claude_ids.get((call.session_id, str(op["id"])))
        if task_id is None:
            return []  # a task this memory never saw created (e.g. in a transcript not imported)
        task = self.entities[task_id]
        events: list[TaskEvent] = []
        if op.get("title"):  # renamed: the new title finds it too
            alias = task_key(task.project, str(op["title"]))
            self.aliases.setdefault(alias, task.id)
            task.aliases.add(alias)
        if op.get("description"):
            task.state["description"] = op["description"]
        if op.get("description") or call.words:
            events += self._blockers_from_text(call, task)
        if op.get("blocked_by"):
            refs = [self.claude_ids.get((call.session_id, b)) for b in op["blocked_by"]]
            blockers = [{"kind": "task", "entity_id": r, "raw_text": r, "confidence": 1.0} for r in refs if r]
            if blockers:
                events += self._move(task, "blocked", call, blockers=blockers)
        if op.get("status"):
            events += self._move(task, str(op["status"]), call)
        return events

    def _list(self, call: Call) -> list[TaskEvent]:
        events: list[TaskEvent] = []
        who = (call.session_id, call.agent_id or "")
        previous = self.lists.get(who, {})  # the session's last list: item title -> task (done ones too)
        seen: dict[str, str] = {}
        for item in call.op.get("todos") or []:
            made: list[TaskEvent] = []
            if item["title"] in previous:
                task = self.entities[previous[item["title"]]]
            else:
                task, made = self._ensure(call, item["title"], item["status"], "")
            events += made
            if not made or made[0].type != "task_created":
                events += self._move(task, item["status"], call)
            seen[item["title"]] = task.id
        for dropped in dict.fromkeys(previous.values()):
            task = self.entities[dropped]
            if dropped not in seen.values() and task.state.get("status") in OPEN:
                events += self._move(task, "cancelled", call, reason="dropped from the session's to-do list")
        self.lists[who] = seen
        return events

    def _ensure(self, call: Call, title: str, status: str, description: str) -> tuple[Entity, list[TaskEvent]]:
        """The open task this title names, or a new one (created in ``status``; never created done)."""
        found, suggested = self.match(call.project, title)
        if found is not None:
            alias = task_key(call.project, title)
            if alias not in self.aliases:
                self.aliases[alias] = found.id
                found.aliases.add(alias)
            return found, []
        key = task_key(call.project, title)
        closed = self.entities.get(self.aliases.get(key, key))
        if closed is not None and closed.type == "task" and status == closed.state.get("status"):
            return closed, []  # a finished task listed again as finished (a later session's list): the same one
        if key in self.entities:  # a closed task of the same title to be done again: another task, key#2, key#3...
            copy = 2
            while f"{key}#{copy}" in self.entities:
                copy += 1
            key = f"{key}#{copy}"
        task = self._entity(key, "task", title, call.project)
        initial = {"done": "in_progress", "blocked": "pending"}.get(status, status)
        task.state = {"status": initial, "priority": "medium", "blockers": [], "blocker_suggestions": [],
                      "description": description, "suggested_same": suggested}  # fmt: skip
        self._opened(task)
        created = {"title": title, "initial_status": initial, "priority": "medium", "project": call.project,
                   "suggested_same": suggested}  # fmt: skip
        events = [TaskEvent("task_created", task.id, created), *self._resolve_conditions(task, call)]
        if status != initial:
            events += self._move(task, status, call)
        return task, events

    def _move(
        self,
        task: Entity,
        to: str,
        call: Call,
        *,
        reason: str | None = None,
        blockers: list[dict[str, Any]] | None = None,
    ) -> list[TaskEvent]:
        """Move ``task`` to ``to`` if the rules allow (pending -> done as two steps), else record the rejection.
        Entering ``blocked`` sets its blockers (``blockers``, else the unknown-blocker placeholder); leaving it, or
        finishing, clears them."""
        now = str(task.state.get("status"))
        if to == now:
            return self._set_blockers(task, blockers, "replace", call) if blockers and to == "blocked" else []
        path = [to]
        if now == "pending" and to == "done":  # a list that skipped in_progress: started, then finished
            path = ["in_progress", "done"]
            reason = reason or "the to-do list went from pending to completed: started, then finished"
        events: list[TaskEvent] = []
        for step in path:
            current = str(task.state["status"])
            if step not in ALLOWED.get(current, frozenset()):
                events.append(TaskEvent("task_transition_rejected", task.id, {
                    "from": current, "to": step, "reason": f"Invalid transition from {current} to {step}",
                    "call": call.event_id}))  # fmt: skip
                return events
            task.state["status"] = step
            self._opened(task)
            payload: dict[str, Any] = {"from": current, "to": step, "call": call.event_id}
            if reason:
                payload["reason"] = reason
            events.append(TaskEvent("task_status_changed", task.id, payload))
            if step == "blocked":
                events += self._set_blockers(task, blockers or [self._unknown_blocker(task)], "replace", call)
            elif current == "blocked" or step in ("done", "cancelled"):
                events += self._set_blockers(task, [], "replace", call)
                if step in ("done", "cancelled"):
                    events += self._set_blockers(task, [], "suggest", call)
        return events

    def _unknown_blocker(self, task: Entity) -> dict[str, Any]:
        text = f"Unknown blocker for: {task.title}"
        placeholder = self._entity(condition_key(task.project, text), "condition", text, task.project)
        self._condition_state(placeholder, {"resolved": False, "auto_placeholder": True, "candidates": []})
        return {"kind": "condition", "entity_id": placeholder.id, "raw_text": "", "confidence": 0.0}

    def _blockers_from_text(self, call: Call, task: Entity) -> list[TaskEvent]:
        """Blockers named in the task's own text, and, for a call about this one task, in the words around it."""
        texts = blocker_texts(f"{task.title}\n{task.state.get('description') or ''}\n{call.words}")
        if not texts:
            return []
        refs = [self._resolve_blocker(t, task) for t in texts]
        return self._set_blockers(task, refs, "suggest", call)

    def _resolve_blocker(self, text: str, task: Entity) -> dict[str, Any]:
        """Seed §11.4: artifact, explicit task key, strict title match, else a condition with candidates."""
        artifact = artifact_key(text)
        if artifact is not None:
            entity = self._entity(artifact[0], "artifact", text, None)
            entity.state = {"identifier": text, "artifact_type": artifact[1]}
            return {"kind": "artifact", "entity_id": entity.id, "raw_text": text, "confidence": 1.0}
        if text.startswith("task:") and text in self.entities:
            return {"kind": "task", "entity_id": text, "raw_text": text, "confidence": 1.0}
        found, candidates = self.match(task.project, text)
        if found is not None and found.id != task.id:
            return {"kind": "task", "entity_id": found.id, "raw_text": text, "confidence": SAME}
        condition = self._entity(condition_key(task.project, text), "condition", text, task.project)
        self._condition_state(condition, {"resolved": False, "candidates": [c for c in candidates if c != task.id]})
        return {"kind": "condition", "entity_id": condition.id, "raw_text": text, "confidence": 0.5}

    def _link(self, source: str, relation: str, target: str) -> None:
        """An edge, checked against :data:`VALID_EDGES`."""
        kinds = (self.entities[source].type, relation, self.entities[target].type)
        if kinds not in VALID_EDGES:
            raise ValueError(f"A {kinds[0]} cannot be {relation} a {kinds[2]} ({source} -> {target}).")
        self.edges.add((source, relation, target))

    def _resolve_conditions(self, task: Entity, call: Call) -> list[TaskEvent]:
        """A new task that a still-open condition named (a strict title match): the condition resolves to it
        (seed §11.5), and the tasks it blocked are blocked by that task in effect."""
        events = []
        waiting = self._unresolved.get(task.project, {})
        for condition_id in sorted(waiting, key=waiting.__getitem__):  # in the order the conditions were made
            condition = self.entities[condition_id]
            score = max(
                fuzz.ratio(condition.title.lower(), task.title.lower()),
                fuzz.token_set_ratio(condition.title, task.title),
            )
            if score / 100 >= SAME:
                condition.state.update({"resolved": True, "resolved_to": task.id})
                self._waits(condition)
                self._link(condition.id, "resolves_to", task.id)
                events.append(TaskEvent("condition_resolved_to", condition.id, {
                    "resolved_to": {"kind": "task", "entity_id": task.id}, "confidence": round(score / 100, 3),
                    "call": call.event_id}))  # fmt: skip
        return events

    def _set_blockers(self, task: Entity, refs: list[dict[str, Any]], mode: str, call: Call) -> list[TaskEvent]:
        relation = "blocked_by" if mode == "replace" else "blocked_by_suggested"
        slot = "blockers" if mode == "replace" else "blocker_suggestions"
        ids = [r["entity_id"] for r in refs]
        if (task.state.get(slot) or []) == ids:
            return []
        if relation == "blocked_by" and ids and task.state.get("status") != "blocked":
            raise ValueError(f"A blocked_by edge needs a blocked task; {task.id} is {task.state.get('status')}.")
        task.state[slot] = ids
        self.edges = {e for e in self.edges if not (e[0] == task.id and e[1] == relation)}
        for target in ids:
            self._link(task.id, relation, target)
        return [TaskEvent("task_blockers_set", task.id, {"mode": mode, "blockers": refs, "call": call.event_id})]
