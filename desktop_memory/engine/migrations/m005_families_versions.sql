-- m005: nothing distinct is overwritten. Look-alike memories (cosine >= near_duplicate_cosine) are
-- related, not merged: they share a family_id (the id of the family's first member; NULL while a
-- memory has no look-alike). The one in-place update (a capture that strictly extends the previous
-- capture from the same source within a few minutes) keeps the earlier text in memory_versions.
-- Versions are not in the FTS index and not embedded; they go with their memory when it is deleted
-- (secure_delete overwrites them like any other row).
ALTER TABLE memories ADD COLUMN family_id TEXT;
CREATE INDEX memories_by_family ON memories(family_id) WHERE family_id IS NOT NULL;

CREATE TABLE memory_versions (
    memory_id     TEXT NOT NULL,
    seq           INTEGER NOT NULL,
    content       TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    created_at    REAL NOT NULL,  -- when this text was captured
    replaced_at   REAL NOT NULL,  -- when a longer capture (or a restore) replaced it
    redactions    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (memory_id, seq)
) WITHOUT ROWID;

CREATE TRIGGER memory_versions_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memory_versions WHERE memory_id = old.id;
END;
