-- m007: imports of other tools' exports (issue 32). A memory imported with an identity in its source (a
-- conversation's message id, a note's path) keeps it in metadata.external_id; importing the same export again, or
-- a newer one of the same account, looks it up here instead of adding it again. Partial: most memories have none.
CREATE INDEX memories_by_external_id ON memories(json_extract(metadata, '$.external_id'))
    WHERE json_extract(metadata, '$.external_id') IS NOT NULL;
