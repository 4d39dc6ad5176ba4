"""Memory given back through the context hooks: UserPromptSubmit (memories matching the prompt), SessionStart (the
project's last session and its recent prompts) and PreToolUse for an edit (the earlier prompts behind the lines about
to change). Runs in the service's worker thread.

What is injected: nothing when the prompt names no topic (an acknowledgement, a greeting, "continue") or when
no hit is close enough in meaning (:func:`claude_memory.core.injection.relevant`); otherwise the best
:data:`INJECTED` hybrid hits from the prompt's project, never from the session asking (its own events are
already in Claude's context), as factual statements with citations and excerpts around what matched, within the
token budget and :data:`PROMPT_CHARS` characters (:mod:`claude_memory.core.injection`).
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field

from claude_memory.core import events as ev
from claude_memory.core.citations import render
from claude_memory.core.disclosure import DEFAULT_BUDGET, SUGGESTED
from claude_memory.core.edits import EDIT_TOOLS
from claude_memory.core.filters import EventFilters
from claude_memory.core.injection import (
    NO_TOPIC,
    Continuing,
    OpenTask,
    Recall,
    StatedPreference,
    informative,
    prompt_context,
    relevant,
    session_context,
    session_summary,
)
from claude_memory.core.machine_text import is_synthetic
from claude_memory.core.why import before_edit_note, touched_lines
from claude_memory.service.capture import HookPayload, session_facts
from claude_memory.service.memory import Memory
from claude_memory.service.projects import ProjectResolver
from claude_memory.service.provenance import read_text
from claude_memory.store import queries, sessions
from claude_memory.store.db import from_store_time
from claude_memory.store.learning import Use

CANDIDATES: Final = 8
# Memories a prompt gets, their excerpts shortened to fit PROMPT_CHARS (core.injection.prompt_context). LoCoMo dev /
# LongMemEval dev evidence injected, in-process on bench/dev_eval.py's stores: 5 at fixed excerpt lengths 70.5 / 65.7 %
# (4 of 5 fitted LongMemEval's long turns); 5 shortened to fit 71.5 / 72.7 %; 6: 74.0 / 75.0 % at 1,406 / 1,325
# characters a prompt; 7: 75.9 / 77.0 %. Through the hook with 6: 74.0 / 76.2 % at 1,403 / 1,295.
INJECTED: Final = 6
PROMPT_CHARS: Final = 1_500
SESSION_START_BUDGET: Final = 600  # tokens: a compact index, the prompt hook brings the details
RECENT_PROMPTS: Final = 5
OPEN_TASKS: Final = 8  # listed at SessionStart, within its budget
NOTED_FILES: Final = 4_096  # (session, file) pairs remembered as noted by the PreToolUse hook
CITATION: Final = re.compile(r"mem:[A-Za-z0-9]{6}")


class ContextParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    payload: HookPayload
    budget: int = Field(default=DEFAULT_BUDGET, ge=0, le=50_000)


class Recaller:
    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.projects = ProjectResolver()
        self._noted: OrderedDict[tuple[str, str], None] = OrderedDict()  # (session, file) given a PreToolUse note

    def context(self, params: ContextParams) -> dict[str, Any]:
        payload = params.payload
        project = self.projects(payload.cwd) if payload.cwd else None
        if payload.hook_event_name == "UserPromptSubmit":
            return self._prompt(payload, project, params.budget)
        if payload.hook_event_name == "SessionStart":
            return self._session_start(payload, project, min(params.budget, SESSION_START_BUDGET))
        if payload.hook_event_name == "PreToolUse":
            return self._before_edit(payload)
        return {"additional_context": "", "citations": [], "reason": "This hook event takes no context."}

    def _prompt(self, payload: HookPayload, project: str | None, budget: int) -> dict[str, Any]:
        prompt = (payload.prompt or "").strip()
        if not prompt or is_synthetic(prompt):
            return {"additional_context": "", "citations": [], "reason": "Not a prompt the user typed."}
        words = self.memory.tokenizer.words(prompt)
        if not informative(words):
            return {"additional_context": "", "citations": [], "reason": NO_TOPIC}  # not worth a search
        hits, meta = self.memory.search(prompt, EventFilters(project=project), CANDIDATES, "hybrid")
        parts = [h.components or {} for h in hits]
        semantic = meta["mode"] != "keyword"
        best_cosine = max((p.get("cosine", 0.0) for p in parts), default=0.0) if semantic else None
        best = {k: max((p.get(k, 0.0) for p in parts), default=0.0) for k in ("coverage", "keyword")}
        why = relevant(words, best_cosine, best["coverage"], best["keyword"] / (self.memory.rarest_idf() or 1.0))
        if why is not None:
            return {"additional_context": "", "citations": [], "reason": why, "meta": meta}
        recalls: list[Recall] = []
        matched: dict[str, float] = {}
        for hit in hits:  # each with its near-duplicates, from other sessions only
            same = [e for e in (hit.event, *hit.duplicates) if e.citation and e.session_id != payload.session_id]
            if not same or len(recalls) >= INJECTED:
                continue
            e, cites = same[0], tuple(render(d.citation or "") for d in same)
            recalls.append(
                Recall(cites[0], e.type, from_store_time(e.ts), e.session_id, e.text, hit.confidence, cites[1:])
            )
            breakdown = hit.components or {}
            match = breakdown.get("cosine" if semantic else "coverage")  # keyword only: the share of words found
            if match is not None:
                matched.update(dict.fromkeys(cites, round(float(match), 4)))
        text, cited = prompt_context(recalls, budget, PROMPT_CHARS, meta["terms"])
        scores = {c: matched[c] for c in cited if c in matched}
        reason = None if text else "Nothing in memory is relevant enough to this prompt."
        return {"additional_context": text, "citations": cited, "scores": scores, "reason": reason, "meta": meta}

    def _before_edit(self, payload: HookPayload) -> dict[str, Any]:
        """Before Claude edits a file: the earlier sessions' prompts behind the lines it is about to change, once
        per file per session, and only when they are matched with confidence."""
        tool_input = payload.tool_input if isinstance(payload.tool_input, dict) else {}
        path = tool_input.get("file_path") or tool_input.get("notebook_path")
        if payload.tool_name not in EDIT_TOOLS or not isinstance(path, str) or not os.path.isabs(path):
            return {"additional_context": "", "citations": [], "reason": "Not an edit of a file."}
        key = (payload.session_id, os.path.normpath(path))
        if key in self._noted:
            return {"additional_context": "", "citations": [], "reason": "This file was noted in this session already."}
        try:
            text = read_text(key[1])
        except ValueError as exc:
            return {"additional_context": "", "citations": [], "reason": str(exc)}
        blame = self.memory.provenance.blame(key[1], text)
        note = before_edit_note(blame, touched_lines(text, payload.tool_name or "", tool_input), payload.session_id)
        if not note:
            return {"additional_context": "", "citations": [], "reason": "No earlier session wrote these lines."}
        self._noted[key] = None
        while len(self._noted) > NOTED_FILES:
            self._noted.popitem(last=False)
        return {"additional_context": note, "citations": list(dict.fromkeys(CITATION.findall(note))), "reason": None}

    def record_uses(self, uses: list[Use]) -> None:
        """Count the memories context answers injected as used (the service does it when quiet, in one batch)."""
        self.memory.writer.record_uses(uses)

    def _session_start(self, payload: HookPayload, project: str | None, budget: int) -> dict[str, Any]:
        if project is None:
            return {"additional_context": "", "citations": [], "reason": "The session has no working directory."}
        summary = self._last_summary(project, payload.session_id)
        recent = [
            Recall(render(e.citation), e.type, from_store_time(e.ts), e.session_id, e.text, SUGGESTED)
            for e in queries.history(
                self.memory.con, EventFilters(project=project, types=(ev.USER_PROMPT,)), RECENT_PROMPTS * 3
            )
            if e.citation is not None and e.session_id != payload.session_id and not e.metadata.get("command")
        ][:RECENT_PROMPTS]
        tasks = self._open_tasks(project)
        prefs = [
            StatedPreference(p["text"], p["citation"], p["count"]) for p in self.memory.insights.for_session(project)
        ]
        continuing = self._continuing(project)
        text = session_context(project, summary, recent, budget, tasks=tasks, preferences=prefs, continuing=continuing)
        working = continuing.working if continuing else ()
        listed = (
            *(r.citation for r in (*recent, *working)),
            *(t.citation for t in tasks),
            *(p.citation for p in prefs),
        )
        cited = list(dict.fromkeys(c for c in listed if c and c in text))
        reason = None if text else "No earlier sessions of this project are in memory."
        return {"additional_context": text, "citations": cited, "reason": reason}

    def _continuing(self, project: str) -> Continuing | None:
        """Endless mode's opening for the project (None in session mode)."""
        found = self.memory.endless.session_context(project)
        if found is None:
            return None
        working = tuple(
            Recall(w["citation"], w["type"], w["timestamp"], "", w["text"], SUGGESTED)
            for w in found["working_set"]
            if w["citation"]
        )
        consolidated = tuple((tuple(c["topics"]), c["summary"]) for c in found["consolidated"])
        return Continuing(found["transition"], found["score"], working, consolidated)

    def _open_tasks(self, project: str) -> list[OpenTask]:
        """The project's open tasks, in progress first, then blocked, then pending (at most OPEN_TASKS)."""
        found = self.memory.tasks.listing(project, ("in_progress", "blocked", "pending"), OPEN_TASKS, fold=False)
        return [
            OpenTask(t["title"], t["status"], t["citation"], tuple(b["title"] for b in t["blockers"])) for t in found
        ]

    def _last_summary(self, project: str, current: str) -> str | None:
        """The project's latest other session: its SessionEnd summary, else one made from its events now."""
        last = sessions.last_other_session(self.memory.con, project, current)
        if last is None:
            return None
        if last.summary:
            return last.summary
        return self._summarise(last.session_id)

    def _summarise(self, session_id: str) -> str | None:
        facts = session_facts(self.memory, session_id)
        return session_summary(facts) if facts is not None else None


def uses(answer: dict[str, Any], session_id: str) -> list[Use]:
    """The accesses a context answer stands for: each memory it injected, in the session it reached, with how well
    it matched (none measured for a listing: SessionStart's recent prompts, a PreToolUse note)."""
    scores = answer.get("scores") or {}
    return [Use(c.removeprefix("mem:"), "hook", session_id, scores.get(c)) for c in answer["citations"]]
