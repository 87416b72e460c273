-- m003: a durable enrichment queue (summaries, titles, importance, entities from engine/enrichment.py).
-- Triggers enqueue in the same transaction as the change, in arrival order (seq); a job that keeps
-- failing is marked 'failed' after a bounded number of attempts and never retried by itself.
CREATE TABLE enrichment_queue (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id   TEXT NOT NULL UNIQUE,
    state       TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'failed')),
    attempts    INTEGER NOT NULL DEFAULT 0,
    not_before  REAL NOT NULL DEFAULT 0,
    last_error  TEXT NOT NULL DEFAULT '',
    queued_at   REAL NOT NULL DEFAULT (unixepoch('subsec'))
);
CREATE INDEX enrichment_queue_by_state ON enrichment_queue(state, seq);

-- What the enrichment wrote, so that a later run (another model) replaces only its own values and
-- never a title or importance the person gave.
ALTER TABLE memories ADD COLUMN enriched_at REAL;
ALTER TABLE memories ADD COLUMN enriched_by TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN enriched_title TEXT NOT NULL DEFAULT '';
ALTER TABLE memories ADD COLUMN enriched_importance REAL;

INSERT INTO enrichment_queue(memory_id) SELECT id FROM memories ORDER BY rowid;

CREATE TRIGGER enrichment_queue_insert AFTER INSERT ON memories BEGIN
    INSERT OR REPLACE INTO enrichment_queue(memory_id) VALUES (new.id);
END;
CREATE TRIGGER enrichment_queue_update AFTER UPDATE OF content ON memories
WHEN new.content IS NOT old.content BEGIN
    INSERT OR REPLACE INTO enrichment_queue(memory_id) VALUES (new.id);
    UPDATE memories SET enrichment_state = 'pending' WHERE rowid = new.rowid;
END;
CREATE TRIGGER enrichment_queue_delete AFTER DELETE ON memories BEGIN
    DELETE FROM enrichment_queue WHERE memory_id = old.id;
END;
