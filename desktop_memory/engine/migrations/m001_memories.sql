-- m001: memories, sessions and the full-text index. Never edit: add a new migration.
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    source_app  TEXT NOT NULL DEFAULT '',
    title       TEXT NOT NULL DEFAULT '',
    started_at  REAL NOT NULL,
    ended_at    REAL NOT NULL,
    count       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_source_end ON sessions(source, source_app, ended_at);

CREATE TABLE memories (
    rowid            INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    content          TEXT NOT NULL,
    summary          TEXT NOT NULL DEFAULT '',
    title            TEXT NOT NULL DEFAULT '',
    source           TEXT NOT NULL DEFAULT 'manual',
    source_app       TEXT NOT NULL DEFAULT '',
    source_url       TEXT NOT NULL DEFAULT '',
    session_id       TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    tags             TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
    entities         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(entities)),
    importance       REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    pinned           INTEGER NOT NULL DEFAULT 0,
    forgotten        INTEGER NOT NULL DEFAULT 0,
    created_at       REAL NOT NULL,
    updated_at       REAL NOT NULL,
    accessed_at      REAL,
    access_count     INTEGER NOT NULL DEFAULT 0,
    content_hash     TEXT NOT NULL,
    metadata         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
    enrichment_state TEXT NOT NULL DEFAULT 'pending',
    redactions       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX memories_by_hash ON memories(content_hash);
CREATE INDEX memories_by_created ON memories(created_at);
CREATE INDEX memories_by_session ON memories(session_id);

-- Contentless FTS5 index (no second copy of the text); rows deleted by rowid.
CREATE VIRTUAL TABLE memories_fts USING fts5(
    content, summary, title, tags, entities,
    content = '', contentless_delete = 1, tokenize = 'porter unicode61'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, content, summary, title, tags, entities) VALUES (
        new.rowid, new.content, new.summary, new.title,
        (SELECT group_concat(value, ' ') FROM json_each(new.tags)),
        (SELECT group_concat(json_extract(value, '$.text'), ' ') FROM json_each(new.entities)));
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.rowid;
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, summary, title, tags, entities ON memories
BEGIN
    DELETE FROM memories_fts WHERE rowid = old.rowid;
    INSERT INTO memories_fts(rowid, content, summary, title, tags, entities) VALUES (
        new.rowid, new.content, new.summary, new.title,
        (SELECT group_concat(value, ' ') FROM json_each(new.tags)),
        (SELECT group_concat(json_extract(value, '$.text'), ' ') FROM json_each(new.entities)));
END;
