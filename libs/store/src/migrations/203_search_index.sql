-- The calls view's search (a case-insensitive substring of inputs, output, attributes, op,
-- display name or exception) reads a text index instead of every row: the lower-cased text of a
-- call's searchable columns, split into words (libs/query search.ts builds the same expressions;
-- a test checks both agree). The index only prunes: the query keeps its exact condition.
-- Parts written before this migration have no index and are read whole until merged.
ALTER TABLE calls_starts ADD INDEX IF NOT EXISTS idx_search lowerUTF8(concat(ifNull(op_name, ''), '\n', ifNull(display_name, ''), '\n', ifNull(inputs_dump, ''), '\n', ifNull(attributes_dump, ''))) TYPE text(tokenizer = splitByNonAlpha);
ALTER TABLE calls_ends ADD INDEX IF NOT EXISTS idx_search lowerUTF8(concat(ifNull(output_dump, ''), '\n', ifNull(exception, ''))) TYPE text(tokenizer = splitByNonAlpha);
