-- Leaner start fragments (issue 12; SCHEMA.md "call line fragments"): 091's line_head held the
-- start's attributes, OTel span and inputs a second time, so every insert compressed, and every
-- merge rewrote, the largest columns twice (an OTLP span ~3 KB more). The start's fragments are
-- now its ids, op and start time (line_start) and its run fields (line_svc); a read splices the
-- stored dumps between them (libs/query call-json.ts fragmentLineSql), the same line as before.
-- The engine's CPU per call stored falls (docs/performance.md, "Decisions"), calls_starts shrinks by a third.
ALTER TABLE calls_starts ADD COLUMN IF NOT EXISTS line_start String MATERIALIZED concat('{"id":', ifNull(toJSONString(id), 'null'), ',"project_id":', ifNull(toJSONString(project_id), 'null'), ',"op_name":', ifNull(toJSONString(ifNull(op_name, '')), 'null'), ',"trace_id":', ifNull(toJSONString(ifNull(trace_id, '')), 'null'), ',"parent_id":', ifNull(toJSONString(nullIf(parent_id, '')), 'null'), ',"thread_id":', ifNull(toJSONString(thread_id), 'null'), ',"turn_id":', ifNull(toJSONString(turn_id), 'null'), ',"started_at":', if(started_at IS NULL, 'null', concat('"', concat(replaceRegexpOne(formatDateTime(assumeNotNull(started_at), '%Y-%m-%dT%H:%i:%S.%f'), '([.]000)?000$', ''), 'Z'), '"')));

ALTER TABLE calls_starts ADD COLUMN IF NOT EXISTS line_svc String MATERIALIZED concat(',"svc_user_id":', ifNull(toJSONString(svc_user_id), 'null'), ',"svc_run_id":', ifNull(toJSONString(svc_run_id), 'null'), ',"svc_run_step":', ifNull(toString(svc_run_step), 'null'), ',"wb_user_id":', ifNull(toJSONString(svc_user_id), 'null'), ',"wb_run_id":', ifNull(toJSONString(svc_run_id), 'null'), ',"wb_run_step":', ifNull(toString(svc_run_step), 'null'));

ALTER TABLE calls_starts MATERIALIZE COLUMN line_start SETTINGS mutations_sync = 2, output_format_json_escape_forward_slashes = 0;

ALTER TABLE calls_starts MATERIALIZE COLUMN line_svc SETTINGS mutations_sync = 2, output_format_json_escape_forward_slashes = 0;

-- Reads use the new fragments from this version on; the old one only cost space and inserts.
ALTER TABLE calls_starts DROP COLUMN IF EXISTS line_head;
