-- m002: a durable queue so that every memory committed here reaches the vector index.
-- Triggers enqueue in the same transaction as the change; the engine drains the queue after
-- writing to Chroma and drains what is left on start (after a crash).
CREATE TABLE vector_queue (
    memory_id  TEXT PRIMARY KEY,
    op         TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    queued_at  REAL NOT NULL DEFAULT (unixepoch('subsec'))
);

INSERT INTO vector_queue(memory_id, op) SELECT id, 'upsert' FROM memories;

CREATE TRIGGER vector_queue_insert AFTER INSERT ON memories BEGIN
    INSERT OR REPLACE INTO vector_queue(memory_id, op) VALUES (new.id, 'upsert');
END;
CREATE TRIGGER vector_queue_update AFTER UPDATE OF content ON memories BEGIN
    INSERT OR REPLACE INTO vector_queue(memory_id, op) VALUES (new.id, 'upsert');
END;
CREATE TRIGGER vector_queue_delete AFTER DELETE ON memories BEGIN
    INSERT OR REPLACE INTO vector_queue(memory_id, op) VALUES (old.id, 'delete');
END;

CREATE TABLE meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
