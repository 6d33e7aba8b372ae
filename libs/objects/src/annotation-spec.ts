import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import { ApiError, badRequest } from '@weft/core';
import { toJsonText } from '@weft/digest';
import type { Store } from '@weft/store';
import { readObject } from './objects';
import { parseRef } from './refs';

/**
 * Annotation feedback (`wandb.annotation.<name>`) is checked against the Weave `AnnotationSpec`
 * its `annotation_ref` names, as the reference's validate_feedback_create_req does: the spec is
 * read, and `payload.value` must satisfy its `field_schema` (JSON Schema; absent: anything).
 * Python's `jsonschema.validate` picks draft 2020-12 for a schema without `$schema` and checks
 * no `format`; Ajv's 2020 validator is set up the same way.
 */
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });

/** Compiled validators by spec version (a version's value never changes); a bounded cache. */
const compiled = new Map<string, ValidateFunction>();
const MAX_COMPILED = 500;

export async function checkAnnotationValue(store: Store, projectId: string, annotationRef: string, payload: Record<string, unknown>) {
  const ref = parseRef(annotationRef);
  if (!ref || ref.kind !== 'object') throw badRequest('annotation_ref: must be an object ref', 'annotation_ref');
  if (ref.projectId !== projectId)
    throw badRequest(`annotation_ref: Annotation ref ${annotationRef} does not match project id ${projectId}`, 'annotation_ref');
  let spec: unknown;
  let digest: string;
  try {
    const obj = await readObject(store, { project_id: projectId, object_id: ref.name, digest: ref.version });
    spec = JSON.parse(toJsonText(obj.val));
    digest = obj.digest;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404)
      throw badRequest(`annotation_ref: Annotation ref ${annotationRef} not found`, 'annotation_ref');
    throw e;
  }
  const schema = isDict(spec) ? (spec.field_schema ?? {}) : undefined;
  if (!isDict(schema) && typeof schema !== 'boolean')
    throw badRequest(
      `annotation_ref: ${annotationRef} is not an AnnotationSpec (its field_schema must be a JSON Schema)`,
      'annotation_ref',
    );
  const validate = validatorFor(`${projectId}/${ref.name}:${digest}`, schema, annotationRef);
  // The payload as plain JSON (lossless numbers become numbers, as Python's json reads them).
  const value = JSON.parse(toJsonText(payload.value ?? null)) as unknown;
  if (!validate(value)) {
    const why = validate.errors?.[0];
    const detail = why ? ` (${why.instancePath || 'value'} ${why.message})` : '';
    throw badRequest(`payload.value: Feedback payload does not match annotation spec${detail}`, 'payload.value');
  }
}

function validatorFor(key: string, schema: object | boolean, annotationRef: string): ValidateFunction {
  const hit = compiled.get(key);
  if (hit) return hit;
  let fn: ValidateFunction;
  try {
    fn = ajv.compile(schema);
  } catch (e) {
    throw badRequest(
      `annotation_ref: the field_schema of ${annotationRef} is not a valid JSON Schema: ${(e as Error).message}`,
      'annotation_ref',
    );
  } finally {
    // Ajv keeps every compiled schema by itself too: the cache below is the only one.
    ajv.removeSchema(schema);
  }
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, fn);
  return fn;
}

const isDict = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
