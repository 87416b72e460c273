-- m004: a float16 copy of each memory's vector, next to the memory. Exact cosines of a few hundred
-- candidates read it (Chroma's get costs ~55 us an id at 100k memories, a row here a few us), and a
-- vector index rebuilt from SQLite needs no re-embedding. A copy always equals the vector Chroma has
-- (or will have, once the vector queue drains) for the memory's current content; a memory without a
-- copy falls back to Chroma. The engine copies the vectors of older stores from Chroma once.
CREATE TABLE memory_vectors (
    rowid  INTEGER PRIMARY KEY,
    vec    BLOB NOT NULL
);

CREATE TRIGGER memory_vectors_stale AFTER UPDATE OF content ON memories
WHEN new.content IS NOT old.content BEGIN
    DELETE FROM memory_vectors WHERE rowid = new.rowid;
END;
CREATE TRIGGER memory_vectors_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memory_vectors WHERE rowid = old.rowid;
END;
