-- m008: sync between the person's machines through a synced folder (issue 35; desktop_memory/sync). Nothing here
-- is used, and the triggers record nothing, until the folder's sync is set up (meta 'sync.on' = '1').

-- Memories changed here since their changes were last written to this machine's log in the sync folder.
CREATE TABLE sync_changes (
    memory_id  TEXT PRIMARY KEY
) WITHOUT ROWID;
CREATE TRIGGER sync_changes_insert AFTER INSERT ON memories
WHEN (SELECT value FROM meta WHERE key = 'sync.on') = '1' BEGIN
    INSERT OR IGNORE INTO sync_changes(memory_id) VALUES (new.id);
END;
CREATE TRIGGER sync_changes_update AFTER UPDATE OF content, title, tags, pinned, forgotten ON memories
WHEN (SELECT value FROM meta WHERE key = 'sync.on') = '1' BEGIN
    INSERT OR IGNORE INTO sync_changes(memory_id) VALUES (new.id);
END;
CREATE TRIGGER sync_changes_delete AFTER DELETE ON memories
WHEN (SELECT value FROM meta WHERE key = 'sync.on') = '1' BEGIN
    INSERT OR IGNORE INTO sync_changes(memory_id) VALUES (old.id);
END;

-- Every memory the set has had: its id (on the machine that added it), the hash of the text it was added with (a
-- group: the same text added on several machines is one memory), its clock, and what it was added with (source,
-- times, metadata: JSON; emptied when purged).
CREATE TABLE sync_adds (
    memory_id  TEXT PRIMARY KEY,
    grp        TEXT NOT NULL,
    hlc        TEXT NOT NULL,
    record     TEXT NOT NULL DEFAULT '{}'
) WITHOUT ROWID;
CREATE INDEX sync_adds_by_group ON sync_adds(grp);

-- Last writer wins: per memory id and field (content, title, pinned, forgotten, tag:<name>) the newest value.
CREATE TABLE sync_registers (
    memory_id  TEXT NOT NULL,
    field      TEXT NOT NULL,
    hlc        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (memory_id, field)
) WITHOUT ROWID;

-- Purges: a group's adds up to this clock are gone everywhere.
CREATE TABLE sync_tombstones (
    grp  TEXT PRIMARY KEY,
    hlc  TEXT NOT NULL
) WITHOUT ROWID;

-- The other machines' logs: which segments have been applied here.
CREATE TABLE sync_applied (
    machine  TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    PRIMARY KEY (machine, seq)
) WITHOUT ROWID;
CREATE TABLE sync_machines (
    machine      TEXT PRIMARY KEY,
    name         TEXT NOT NULL DEFAULT '',
    public_key   TEXT NOT NULL DEFAULT '',
    covered      INTEGER NOT NULL DEFAULT 0,   -- every segment up to this one applied (or in a snapshot applied)
    last_seq     INTEGER NOT NULL DEFAULT 0,   -- the newest segment seen
    last_change  REAL,                          -- its newest segment's clock (epoch seconds)
    removed_at   INTEGER                        -- removed from the set: its segments after this one are ignored
) WITHOUT ROWID;
