"""Ordered, named schema migrations. Each runs once, in its own transaction, and is recorded."""

from __future__ import annotations

from typing import Final

from claude_memory.store import traits

MIGRATIONS: Final[tuple[tuple[str, str], ...]] = (
    (
        "0001_events_sessions_projects",
        """
        -- All timestamps are UTC, stored without a zone.
        CREATE TABLE events (
            id            BIGINT PRIMARY KEY,          -- hash of dedupe_key: stable across re-imports
            seq           BIGINT NOT NULL,             -- insertion order, assigned by the single writer
            dedupe_key    VARCHAR NOT NULL,            -- id is its hash; the primary key enforces uniqueness
            type          VARCHAR NOT NULL,
            session_id    VARCHAR NOT NULL,
            project       VARCHAR,
            agent_id      VARCHAR,
            is_sidechain  BOOLEAN NOT NULL DEFAULT FALSE,
            ts            TIMESTAMP,
            text          VARCHAR NOT NULL,
            message_id    VARCHAR,
            tool_name     VARCHAR,
            tool_use_id   VARCHAR,
            files         VARCHAR[],
            cwd           VARCHAR,
            git_branch    VARCHAR,
            source_path   VARCHAR,
            line_start    INTEGER,
            line_end      INTEGER,
            byte_start    BIGINT,
            byte_end      BIGINT,
            source_uuid   VARCHAR,
            metadata      JSON,
            kw_len        INTEGER NOT NULL DEFAULT 0,  -- token count for BM25 length normalisation
            ingested_at   TIMESTAMP NOT NULL
        );
        CREATE TABLE sessions (
            session_id    VARCHAR PRIMARY KEY,
            project       VARCHAR,
            cwd           VARCHAR,
            title         VARCHAR,
            git_branch    VARCHAR,
            cc_version    VARCHAR,
            transcript    VARCHAR,
            first_ts      TIMESTAMP,
            last_ts       TIMESTAMP
        );
        CREATE TABLE projects (
            project       VARCHAR PRIMARY KEY,         -- normalised path (git root when it exists)
            first_seen    TIMESTAMP,                   -- first and last activity of its sessions
            last_seen     TIMESTAMP
        );
        CREATE TABLE subagents (
            session_id    VARCHAR NOT NULL,
            agent_id      VARCHAR NOT NULL,
            agent_type    VARCHAR,
            description   VARCHAR,
            transcript    VARCHAR,
            PRIMARY KEY (session_id, agent_id)
        );
        CREATE TABLE ingest_checkpoints (
            path          VARCHAR PRIMARY KEY,
            device        BIGINT,
            inode         BIGINT,
            head_hash     VARCHAR,                     -- sha256 of the first bytes: detects a replaced file
            size          BIGINT,
            byte_offset   BIGINT NOT NULL,
            line_no       BIGINT NOT NULL,
            updated_at    TIMESTAMP NOT NULL
        );
        CREATE TABLE tombstones (
            event_id      BIGINT PRIMARY KEY,          -- that something was forgotten, never what
            forgotten_at  TIMESTAMP NOT NULL
        );
        """,
    ),
    (
        "0002_keyword_index",
        """
        -- BM25 postings maintained incrementally by the writer. kw_main is kept sorted by term so that
        -- DuckDB's zone maps skip most of it; new postings land in kw_delta and are merged in batches.
        -- dl (the event's indexed length) is repeated on each posting so unfiltered queries never join events.
        CREATE TABLE kw_main  (term VARCHAR NOT NULL, event_id BIGINT NOT NULL, tf INTEGER NOT NULL,
                               dl INTEGER NOT NULL);
        CREATE TABLE kw_delta (term VARCHAR NOT NULL, event_id BIGINT NOT NULL, tf INTEGER NOT NULL,
                               dl INTEGER NOT NULL);
        """,
    ),
    (
        "0003_citations",
        """
        -- mem:XXXXXX citations: assigned by the writer with each new event, never reused (a forgotten
        -- event's citation stays on its tombstone so no later event can take it).
        ALTER TABLE events ADD COLUMN citation VARCHAR;
        ALTER TABLE tombstones ADD COLUMN citation VARCHAR;
        CREATE TABLE citation_uses (
            citation      VARCHAR NOT NULL,
            used_at       TIMESTAMP NOT NULL,
            via           VARCHAR NOT NULL               -- which face resolved it: cli, hook, mcp, lsp
        );
        """,
    ),
    (
        "0004_store_flags",
        """
        -- Durable to-dos for the store itself, e.g. 'rewrite_pending': set by forget in the same
        -- transaction as the deletes, cleared in the rewritten file, acted on at the next open if a
        -- crash came in between.
        CREATE TABLE store_flags (name VARCHAR PRIMARY KEY, set_at TIMESTAMP NOT NULL);
        """,
    ),
    (
        "0005_embeddings",
        """
        -- Semantic recall. embed_queue is the outbox: a row per event still to embed, written in the
        -- same transaction as the event and deleted in the same transaction as its chunks.
        CREATE TABLE embed_queue (
            event_id      BIGINT PRIMARY KEY,
            attempts      INTEGER NOT NULL DEFAULT 0,
            last_error    VARCHAR,                     -- one sentence, never content
            not_before    TIMESTAMP                    -- retry backoff
        );
        -- One vector per distinct chunk text and model: the same text is never embedded twice.
        CREATE TABLE vectors (
            content_hash  VARCHAR PRIMARY KEY,         -- sha256 of model id + chunk text
            vector        FLOAT[] NOT NULL
        );
        -- The chunks of each event; label is the hnswlib label (derived index beside the database).
        CREATE TABLE chunks (
            label         BIGINT PRIMARY KEY,
            event_id      BIGINT NOT NULL,
            chunk_no      INTEGER NOT NULL,
            content_hash  VARCHAR NOT NULL
        );
        -- Labels only grow, so a label forgotten (and only marked deleted in the index) is never reused.
        CREATE TABLE label_counter (next_label BIGINT NOT NULL);
        INSERT INTO label_counter VALUES (0);
        INSERT INTO embed_queue SELECT id, 0, NULL, NULL FROM events;
        """,
    ),
    (
        "0006_session_end",
        """
        -- Written when Claude Code ends a session (SessionEnd hook): a rule-based summary (no LLM) that
        -- the next session of the project is shown. Derived from the events, so rebuilt on demand.
        CREATE TABLE session_ends (
            session_id    VARCHAR PRIMARY KEY,
            ended_at      TIMESTAMP NOT NULL,
            reason        VARCHAR,
            summary       VARCHAR NOT NULL
        );
        """,
    ),
    (
        "0007_event_is_question",
        """
        -- Ranking priors (store/traits.py): the writer sets them for new events, 0009 fills the older
        -- ones. One step each: DuckDB cannot alter a table with a primary key twice, or alter and then
        -- update it, in one transaction.
        ALTER TABLE events ADD COLUMN is_question BOOLEAN DEFAULT FALSE;
        """,
    ),
    (
        "0008_event_names_time",
        """
        ALTER TABLE events ADD COLUMN names_time BOOLEAN DEFAULT FALSE;
        """,
    ),
    (
        "0009_event_traits_filled",
        f"""
        UPDATE events SET is_question = {traits.is_question("text")}, names_time = {traits.names_time("text")};
        """,
    ),
    (
        "0010_embedding_model",
        """
        -- The embedding model the store's vectors were made with (one row): every process that opens the store
        -- finds the same model without being told where it is (store/embedder.py).
        CREATE TABLE embedding_model (
            name          VARCHAR NOT NULL,            -- fastembed's model name
            model_id      VARCHAR NOT NULL,            -- the vectors' space (chunk hashes and the index carry it)
            source        VARCHAR NOT NULL,            -- path | recorded | managed | cache
            path          VARCHAR,                     -- the folder model.onnx was loaded from
            fingerprint   VARCHAR,                     -- sha256 of that model.onnx
            recorded_at   TIMESTAMP NOT NULL
        );
        """,
    ),
    (
        "0011_model_switch",
        """
        -- A change of embedding model in progress (claude-memory model use; at most one row): every event is
        -- embedded again under the next model, into next_chunks, while chunks (the current model's) keep serving
        -- search; when every event is done, one transaction puts next_chunks in their place and records the model.
        CREATE TABLE next_model (
            name          VARCHAR NOT NULL,            -- fastembed's model name
            model_id      VARCHAR NOT NULL,            -- the next vectors' space
            path          VARCHAR NOT NULL,            -- the folder its model.onnx is loaded from
            source        VARCHAR NOT NULL,            -- path | managed: how later processes find it
            requested     VARCHAR NOT NULL,            -- what was asked for: a name, a folder, int8 or float32
            started_at    TIMESTAMP NOT NULL,
            done_seq      BIGINT NOT NULL,             -- events up to this seq have their next chunks
            last_error    VARCHAR                      -- one sentence, when the last batch failed
        );
        CREATE TABLE next_chunks (                   -- as chunks; labels come from the same counter
            label         BIGINT PRIMARY KEY,
            event_id      BIGINT NOT NULL,
            chunk_no      INTEGER NOT NULL,
            content_hash  VARCHAR NOT NULL
        );
        """,
    ),
    (
        "0012_edit_hunks",
        """
        -- What each successful editing call (Edit, MultiEdit, Write, NotebookEdit) changed in a file, hunk by
        -- hunk (core/edits.py): derived from the call, privacy-filtered like its event, deleted with it. Blame
        -- aligns these texts with a file as it is now (core/blame.py). Calls stored before this migration are
        -- read again from their transcripts once (flag 'edits_backfill', service/provenance.py).
        CREATE TABLE edit_hunks (
            event_id      BIGINT NOT NULL,
            hunk_no       INTEGER NOT NULL,
            file          VARCHAR NOT NULL,            -- absolute path, as the tool reported it
            rel_path      VARCHAR,                     -- relative to the event's project root, when under it
            new_start     INTEGER,                     -- its first line right after the call (NULL: not reported)
            text          VARCHAR NOT NULL,            -- the lines it inserted
            removed       VARCHAR NOT NULL,            -- the lines it removed there
            PRIMARY KEY (event_id, hunk_no)
        );
        INSERT INTO store_flags
            SELECT 'edits_backfill', now() AT TIME ZONE 'UTC' WHERE EXISTS (SELECT 1 FROM events WHERE tool_name IN
            ('Edit', 'MultiEdit', 'Write', 'NotebookEdit'));
        """,
    ),
    (
        "0013_tasks",
        """
        -- Tasks that survive sessions (core/tasks.py, service/tasks.py): Claude Code's task tool calls (their events'
        -- metadata.task) folded into task events, entities (task, condition, artifact), aliases and edges. All derived
        -- from the events: the projector rebuilds them from the calls and gives the same result; forget cascades.
        CREATE TABLE task_events (
            seq           BIGINT PRIMARY KEY,          -- the fold's order
            dedupe_key    VARCHAR NOT NULL UNIQUE,     -- seed §3.5: type, task, session, payload (with its call)
            type          VARCHAR NOT NULL,            -- task_created, task_status_changed, task_blockers_set, ...
            task_id       VARCHAR NOT NULL,
            session_id    VARCHAR NOT NULL,
            source_event  BIGINT NOT NULL,             -- the tool call it came from (its citation, its transcript line)
            ts            TIMESTAMP,
            payload       JSON NOT NULL
        );
        CREATE TABLE entities (
            id            VARCHAR PRIMARY KEY,         -- task:<project>:<key>, cond:..., art:...
            type          VARCHAR NOT NULL,            -- task | condition | artifact
            title         VARCHAR NOT NULL,
            project       VARCHAR,
            current_json  JSON NOT NULL                -- the fold: status, priority, blockers, description...
        );
        CREATE TABLE entity_aliases (alias_key VARCHAR PRIMARY KEY, entity_id VARCHAR NOT NULL);
        CREATE TABLE edges (
            src           VARCHAR NOT NULL,
            rel           VARCHAR NOT NULL,            -- blocked_by, blocked_by_suggested, resolves_to
            dst           VARCHAR NOT NULL,
            PRIMARY KEY (src, rel, dst)
        );
        CREATE TABLE projection_offsets (name VARCHAR PRIMARY KEY, event_seq BIGINT NOT NULL);
        -- A person's corrections (claude-memory task close / merge): not derived, so a rebuild keeps them; folded in
        -- with the calls at their time.
        CREATE TABLE task_corrections (
            seq           BIGINT PRIMARY KEY,
            ts            TIMESTAMP NOT NULL,
            kind          VARCHAR NOT NULL,            -- close | cancel | merge
            task_id       VARCHAR NOT NULL,            -- the task closed, or the one merged away
            into_id       VARCHAR                      -- merge: the task kept
        );
        """,
    ),
    (
        "0014_learning",
        """
        -- Access metrics (seed §4.2, kept in the store so that short-lived hook processes count): each use of a
        -- citation says which session it reached (NULL: a person outside a session, e.g. the CLI) and how well the
        -- memory matched what was asked (cosine for an injection, 1.0 for a memory asked for by its citation).
        ALTER TABLE citation_uses ADD COLUMN session_id VARCHAR;
        ALTER TABLE citation_uses ADD COLUMN confidence DOUBLE;
        -- Graduation L0 -> L4 (core/graduation.py): an event without a row is L0.
        CREATE TABLE memory_levels (
            event_id      BIGINT PRIMARY KEY,
            level         INTEGER NOT NULL,
            evaluated_at  TIMESTAMP NOT NULL,          -- the worker's cooldown runs from here
            graduated_at  TIMESTAMP                    -- its last promotion
        );
        -- What the user's prompts say that outlives them (core/insights.py): each informative prompt's canonical key
        -- (repeated topics) and the rules and preferences it states. Derived from the prompts (offset 'insights' in
        -- projection_offsets), deleted with them; insights are grouped from these rows when read.
        CREATE TABLE prompt_insights (
            event_id      BIGINT PRIMARY KEY,
            project       VARCHAR,
            session_id    VARCHAR NOT NULL,
            ts            TIMESTAMP,
            canonical_key VARCHAR NOT NULL,            -- seed §3.4
            rules         JSON                         -- the rules it states (NULL: none)
        );
        -- A person's marks on an insight (claude-memory insights pin / forget): not derived, so a rebuild keeps them.
        CREATE TABLE insight_marks (
            insight_id    VARCHAR PRIMARY KEY,
            mark          VARCHAR NOT NULL,            -- pin | forget (hidden, its evidence kept)
            marked_at     TIMESTAMP NOT NULL
        );
        """,
    ),
    (
        "0015_endless",
        """
        -- Endless mode (seed §9, core/endless.py): the mode (a person's setting), the working set (recent events, 24 h
        -- sliding, bounded), consolidated memories (rule-based summaries of topics), and the continuity log (how each
        -- prompt relates to the one before). Built from the events while the mode is endless; forget cascades.
        CREATE TABLE endless_config (key VARCHAR PRIMARY KEY, value JSON NOT NULL);
        CREATE TABLE working_set (
            event_id      BIGINT PRIMARY KEY,
            project       VARCHAR,
            added_at      TIMESTAMP NOT NULL,          -- the event's time
            expires_at    TIMESTAMP NOT NULL,
            relevance     DOUBLE NOT NULL,
            topics        JSON NOT NULL
        );
        CREATE TABLE consolidated_memories (
            id            VARCHAR PRIMARY KEY,         -- con:<first 12 hex of the sha1 of its source ids>
            project       VARCHAR,
            summary       VARCHAR NOT NULL,
            topics        JSON NOT NULL,
            source_events BIGINT[] NOT NULL,
            confidence    DOUBLE NOT NULL,
            created_at    TIMESTAMP NOT NULL,
            accessed_at   TIMESTAMP,
            access_count  INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE continuity_log (
            event_id      BIGINT PRIMARY KEY,          -- the prompt
            project       VARCHAR,
            ts            TIMESTAMP,
            score         DOUBLE NOT NULL,
            transition    VARCHAR NOT NULL,            -- seamless | topic_shift | break
            snapshot      JSON NOT NULL                -- its topics, files and entities
        );
        """,
    ),
    (
        "0016_task_board",
        """
        -- The task projector's board (core/tasks.py Board.dump) as it was after folding the calls up to ``state``,
        -- written with the projection: a later process folds new calls into it instead of folding every call again,
        -- and the service need not hold it between calls. Used only while ``state`` is the projection's offset;
        -- deleted by a forget or a correction (which reset the offset). One row at most.
        CREATE TABLE task_board (
            state         BIGINT NOT NULL,             -- the seq of the newest task call folded in
            body          BLOB NOT NULL                -- zlib-compressed JSON
        );
        """,
    ),
)
