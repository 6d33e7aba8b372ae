import { badRequest, invalidField } from '@weft/core';
import { builtinBases, hasBuiltinSchema, validateBuiltinObject } from './builtin-object-schemas';

/**
 * Object classes as the reference derives them. A value "has classes" when it is a dict
 * whose `_bases` list ends with [`BaseObject`|`Object`, `BaseModel`]; then the leaf class is
 * `_class_name` and the base class is the one just above those two (or the leaf itself).
 */
export function objectClassesOf(val: unknown): { base: string | null; leaf: string | null } {
  if (!isDict(val)) return { base: null, leaf: null };
  const bases = val._bases;
  if (!Array.isArray(bases) || bases.length < 2) return { base: null, leaf: null };
  if (bases[bases.length - 1] !== 'BaseModel') return { base: null, leaf: null };
  if (bases[bases.length - 2] !== 'BaseObject' && bases[bases.length - 2] !== 'Object') return { base: null, leaf: null };
  const className = typeof val._class_name === 'string' ? val._class_name : null;
  const base = bases.length > 2 ? String(bases[bases.length - 3]) : className;
  return { base, leaf: className };
}

/**
 * The reference's builtin object classes (server-validated pydantic models), each with the
 * builtin classes it derives from (nearest first; all derive from BaseObject). Those with a
 * schema in builtin-object-schemas.ts are validated and dumped as the reference does; the
 * others are stored as sent, with their class hierarchy added.
 */
const BUILTIN_OBJECT_CLASS_PARENTS: Record<string, string[]> = {
  TestOnlyExample: [],
  TestOnlyNestedBaseObject: [],
  TestOnlyInheritedBaseObject: ['TestOnlyNestedBaseObject'],
  Leaderboard: [],
  ActionSpec: [],
  AlertSpec: [],
  AnnotationSpec: [],
  Provider: [],
  ProviderModel: [],
  LLMStructuredCompletionModel: [], // a Model (schema: builtin-object-schemas.ts)
  SavedView: [],
  ComparisonView: [],
  ChartConfig: [],
  Prompt: [],
  StringPrompt: [],
  MessagesPrompt: [],
  EvaluationResult: [],
};
export const BUILTIN_OBJECT_CLASSES = new Set(Object.keys(BUILTIN_OBJECT_CLASS_PARENTS));

export interface ProcessedObject {
  val: unknown;
  baseObjectClass: string | null;
  leafObjectClass: string | null;
}

/**
 * `process_incoming_object_val`: checks `builtin_object_class` against the value and, for a
 * plain dict of a builtin class, records the class hierarchy in the value (which changes its digest).
 */
export function processIncomingObject(val: unknown, builtinClass: string | null, field: string): ProcessedObject {
  if (!isDict(val)) {
    if (builtinClass !== null) throw badRequest(`${field}: builtin_object_class cannot be provided for non-dict objects`, field);
    return { val, baseObjectClass: null, leafObjectClass: null };
  }
  const classes = objectClassesOf(val);
  if (builtinClass !== null && classes.leaf !== null && classes.leaf !== builtinClass) {
    throw badRequest(`${field}: object_class must match val's defined object class: ${builtinClass} != ${classes.leaf}`, field);
  }
  if (classes.leaf !== null || builtinClass === null) {
    return { val, baseObjectClass: classes.base, leafObjectClass: classes.leaf };
  }
  if (!BUILTIN_OBJECT_CLASSES.has(builtinClass)) throw badRequest(`${field}: Unknown object class: ${builtinClass}`, field);
  if (hasBuiltinSchema(builtinClass)) {
    const dumped = validateBuiltinObject(builtinClass, val, 'obj.val');
    return { val: dumped, ...classesOf(builtinClass, builtinBases(builtinClass)) };
  }
  // The reference's dump_object: `_type`, the fields, `_class_name`, `_bases` (the class's MRO).
  const bases = [...BUILTIN_OBJECT_CLASS_PARENTS[builtinClass]!, 'BaseObject', 'BaseModel'];
  const dumped: Record<string, unknown> = { _type: builtinClass, ...val, _class_name: builtinClass, _bases: bases };
  return { val: dumped, ...classesOf(builtinClass, bases) };
}

/** get_object_classes of a dump: the leaf is the class, the base the one above BaseObject|Object (or the leaf). */
function classesOf(className: string, bases: string[]): { baseObjectClass: string; leafObjectClass: string } {
  return { baseObjectClass: bases.length > 2 ? bases[bases.length - 3]! : className, leafObjectClass: className };
}

/** `op` when the value is a serialised op (`_type`/`weave_type.type` == `Op`), else `object`. */
export function kindOf(val: unknown): 'op' | 'object' {
  if (!isDict(val) || !('_type' in val)) return 'object';
  const wt = val.weave_type;
  const t = isDict(wt) ? wt.type : val._type;
  return t === 'Op' ? 'op' : 'object';
}

/**
 * The reference's object_id_validator: 1..128 characters of letters, digits, `_`, `.`, `-`
 * (a bad character or an empty name is its InvalidFieldError, a long name a plain 400).
 */
export function validateObjectId(objectId: string, field: string): void {
  if (objectId.length === 0) throw invalidField(`${field}: Object name cannot be empty`, field);
  if (objectId.length > 128) throw badRequest(`${field}: Invalid object name: longer than 128 characters`, field);
  if (!/^[\p{L}\p{N}_.-]+$/u.test(objectId)) {
    throw invalidField(`${field}: Invalid object name: '${objectId}' may contain only letters, digits, '_', '.' and '-'`, field);
  }
}

export function isDict(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}
