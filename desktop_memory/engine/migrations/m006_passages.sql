-- m006: vectors of the passages of long memories (core/passages.py). The model reads a text's first 256
-- word pieces; a memory longer than one passage is also found by each of its passages. Rows exist only
-- for memories of more than one passage; a memory longer than one passage's worth of characters
-- (512: 128 estimated tokens of 4 characters) waits in `passage_queue` until its passages are embedded
-- (at once by an add or an import, else by the vector sync). A content change or a delete removes the
-- passages (secure_delete overwrites them); `passage_state.generation` tells a reader's cache it is stale.
-- 512 below is core/passages.LONG_CHARS, which SQL cannot import: tests/unit/test_passages.py holds them equal.
CREATE TABLE passage_vectors (
    memory  INTEGER NOT NULL,  -- memories.rowid
    ord     INTEGER NOT NULL,
    start   INTEGER NOT NULL,  -- character offsets into the memory's content
    "end"   INTEGER NOT NULL,
    vec     BLOB NOT NULL,
    PRIMARY KEY (memory, ord)
) WITHOUT ROWID;

CREATE TABLE passage_queue (
    memory  INTEGER PRIMARY KEY  -- memories.rowid of a long memory whose passages are not embedded yet
);

CREATE TABLE passage_state (
    one         INTEGER PRIMARY KEY CHECK (one = 1),
    generation  INTEGER NOT NULL
);
INSERT INTO passage_state VALUES (1, 0);

CREATE TRIGGER passage_queue_insert AFTER INSERT ON memories WHEN length(new.content) > 512 BEGIN
    INSERT OR IGNORE INTO passage_queue(memory) VALUES (new.rowid);
END;
CREATE TRIGGER passage_vectors_stale AFTER UPDATE OF content ON memories
WHEN new.content IS NOT old.content BEGIN
    DELETE FROM passage_vectors WHERE memory = new.rowid;
    DELETE FROM passage_queue WHERE memory = new.rowid;
    INSERT INTO passage_queue(memory) SELECT new.rowid WHERE length(new.content) > 512;
END;
CREATE TRIGGER passage_vectors_delete AFTER DELETE ON memories BEGIN
    DELETE FROM passage_vectors WHERE memory = old.rowid;
    DELETE FROM passage_queue WHERE memory = old.rowid;
END;
CREATE TRIGGER passage_vectors_added AFTER INSERT ON passage_vectors BEGIN
    UPDATE passage_state SET generation = generation + 1 WHERE one = 1;
END;
CREATE TRIGGER passage_vectors_removed AFTER DELETE ON passage_vectors BEGIN
    UPDATE passage_state SET generation = generation + 1 WHERE one = 1;
END;

INSERT INTO passage_queue(memory) SELECT rowid FROM memories WHERE length(content) > 512;
