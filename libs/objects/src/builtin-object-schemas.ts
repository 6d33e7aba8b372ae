import { badRequest } from '@weft/core';
import { LosslessNumber, isLosslessNumber } from '@weft/digest';

/**
 * The field schemas of the reference's builtin object classes that weft validates and dumps as
 * the reference does (`process_incoming_object_val` with `builtin_object_class`:
 * `Class.model_validate(val)`, then `dump_object`). The dump is what the SDK publishes for the
 * same object, so both routes give one digest: `_type`, the declared fields in declaration
 * order (aliases as keys, defaults filled in, nested models dumped the same way), `_class_name`,
 * `_bases` (the class's MRO without itself and `object`). Fields the model does not declare
 * are dropped, or refused where the model forbids them (pydantic's `extra`).
 */

type FieldType =
  | { t: 'str' }
  | { t: 'int' }
  | { t: 'float' }
  | { t: 'null' }
  | { t: 'any' }
  | { t: 'dict'; values?: FieldType }
  | { t: 'list'; items: FieldType }
  | { t: 'literal'; values: string[] }
  | { t: 'model'; name: string }
  | { t: 'union'; of: FieldType[] };

interface FieldDef {
  name: string;
  type: FieldType;
  /** The key in the value (pydantic's alias), when not the name. */
  alias?: string;
  /** Absent: the field is required. */
  default?: () => unknown;
}

interface ModelDef {
  bases: string[];
  extra: 'ignore' | 'forbid';
  fields: FieldDef[];
}

const str: FieldType = { t: 'str' };
const int: FieldType = { t: 'int' };
const float: FieldType = { t: 'float' };
const dict: FieldType = { t: 'dict' };
const optional = (type: FieldType): FieldType => ({ t: 'union', of: [type, { t: 'null' }] });
const list = (items: FieldType): FieldType => ({ t: 'list', items });
const model = (name: string): FieldType => ({ t: 'model', name });
const none = () => null;

// BaseObject (builtin_object_classes/base_object_def.py) and weave.Object, which Model derives from.
const baseObjectFields: FieldDef[] = [
  { name: 'name', type: optional(str), default: none },
  { name: 'description', type: optional(str), default: none },
];
const objectFields: FieldDef[] = [...baseObjectFields, { name: 'ref', type: { t: 'any' }, default: none }];

const MODELS: Record<string, ModelDef> = {
  // test_only_example.py
  TestOnlyNestedBaseModel: {
    bases: ['BaseModel'],
    extra: 'ignore',
    fields: [
      { name: 'a', type: int },
      { name: 'aliased_property', alias: 'aliased_property_alias', type: int },
    ],
  },
  TestOnlyNestedBaseObject: {
    bases: ['BaseObject', 'BaseModel'],
    extra: 'ignore',
    fields: [...baseObjectFields, { name: 'b', type: int }],
  },
  TestOnlyInheritedBaseObject: {
    bases: ['TestOnlyNestedBaseObject', 'BaseObject', 'BaseModel'],
    extra: 'ignore',
    fields: [
      ...baseObjectFields,
      { name: 'b', type: int },
      { name: 'c', type: int },
      { name: 'additional_field', type: str, default: () => 'default_value' },
    ],
  },
  TestOnlyExample: {
    bases: ['BaseObject', 'BaseModel'],
    extra: 'ignore',
    fields: [
      ...baseObjectFields,
      { name: 'primitive', type: int },
      { name: 'nested_base_model', type: model('TestOnlyNestedBaseModel') },
      { name: 'nested_base_object', type: str },
    ],
  },
  // provider.py: the custom providers of /completions/create.
  Provider: {
    bases: ['BaseObject', 'BaseModel'],
    extra: 'ignore',
    fields: [
      ...baseObjectFields,
      { name: 'base_url', type: str },
      { name: 'api_key_name', type: str },
      { name: 'extra_headers', type: { t: 'dict', values: str }, default: () => ({}) },
      { name: 'return_type', type: { t: 'literal', values: ['openai'] }, default: () => 'openai' },
    ],
  },
  ProviderModel: {
    bases: ['BaseObject', 'BaseModel'],
    extra: 'ignore',
    fields: [...baseObjectFields, { name: 'provider', type: str }, { name: 'max_tokens', type: int }],
  },
  // llm_structured_model.py
  Message: {
    bases: ['BaseModel'],
    extra: 'ignore',
    fields: [
      { name: 'role', type: str },
      { name: 'content', type: { t: 'union', of: [str, list(dict), { t: 'null' }] }, default: none },
      { name: 'name', type: optional(str), default: none },
      { name: 'function_call', type: optional(dict), default: none },
      { name: 'tool_call_id', type: optional(str), default: none },
    ],
  },
  LLMStructuredCompletionModelDefaultParams: {
    bases: ['BaseModel'],
    extra: 'ignore',
    fields: [
      { name: 'messages_template', type: optional(list(model('Message'))), default: none },
      { name: 'prompt', type: optional(str), default: none },
      { name: 'temperature', type: optional(float), default: none },
      { name: 'top_p', type: optional(float), default: none },
      { name: 'max_tokens', type: optional(int), default: none },
      { name: 'presence_penalty', type: optional(float), default: none },
      { name: 'frequency_penalty', type: optional(float), default: none },
      { name: 'stop', type: optional(list(str)), default: none },
      { name: 'n_times', type: optional(int), default: none },
      { name: 'functions', type: optional(list(dict)), default: none },
      { name: 'response_format', type: optional({ t: 'literal', values: ['json_object', 'json_schema', 'text'] }), default: none },
    ],
  },
  LLMStructuredCompletionModel: {
    bases: ['Model', 'Object', 'BaseModel'],
    extra: 'forbid',
    fields: [
      ...objectFields,
      { name: 'llm_model_id', type: str },
      { name: 'default_params', type: model('LLMStructuredCompletionModelDefaultParams'), default: () => ({}) },
    ],
  },
};

/** The builtin classes whose fields weft knows (the others are stored with their hierarchy only). */
export function hasBuiltinSchema(className: string): boolean {
  return className in MODELS && MODELS[className]!.bases.length > 1;
}

/** The class hierarchy (`_bases`) of a builtin class with a schema. */
export function builtinBases(className: string): string[] {
  return MODELS[className]!.bases;
}

class Invalid extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * `Class.model_validate(val)` dumped as `dump_object` does; a value that does not fit is a 400
 * naming the field (the reference's ValidationError is a ValueError: 400 too).
 */
export function validateBuiltinObject(className: string, val: unknown, field: string): Record<string, unknown> {
  try {
    return validateModel(className, val, '');
  } catch (e) {
    if (!(e instanceof Invalid)) throw e;
    const at = e.path ? `${field}.${e.path}` : field;
    throw badRequest(`${at}: ${e.message} (validating ${className})`, at);
  }
}

function validateModel(name: string, val: unknown, path: string): Record<string, unknown> {
  const def = MODELS[name]!;
  if (!isDict(val)) throw new Invalid(path, `Input should be a valid dictionary or instance of ${name}`);
  const declared = new Set(def.fields.map((f) => f.alias ?? f.name));
  if (def.extra === 'forbid') {
    const extra = Object.keys(val).find((k) => !declared.has(k));
    if (extra !== undefined) throw new Invalid(join(path, extra), 'Extra inputs are not permitted');
  }
  const out: Record<string, unknown> = { _type: name };
  for (const f of def.fields) {
    const key = f.alias ?? f.name;
    const at = join(path, key);
    if (val[key] === undefined) {
      if (!f.default) throw new Invalid(at, 'Field required');
      // Defaults are not validated (pydantic's default), but a nested model's default is dumped.
      const d = f.default();
      out[key] = f.type.t === 'model' ? validateModel(f.type.name, d, at) : d;
    } else {
      out[key] = validateValue(f.type, val[key], at);
    }
  }
  out._class_name = name;
  out._bases = def.bases;
  return out;
}

function validateValue(type: FieldType, v: unknown, path: string): unknown {
  switch (type.t) {
    case 'any':
      return v;
    case 'null':
      if (v === null) return null;
      throw new Invalid(path, 'Input should be None');
    case 'str':
      if (typeof v === 'string') return v;
      throw new Invalid(path, 'Input should be a valid string');
    case 'int':
      return asInt(v, path);
    case 'float':
      return asFloat(v, path);
    case 'literal':
      if (typeof v === 'string' && type.values.includes(v)) return v;
      throw new Invalid(path, `Input should be ${type.values.map((x) => `'${x}'`).join(' or ')}`);
    case 'dict': {
      if (!isDict(v)) throw new Invalid(path, 'Input should be a valid dictionary');
      if (!type.values) return v;
      const values = type.values;
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, validateValue(values, x, join(path, k))]));
    }
    case 'list':
      if (!Array.isArray(v)) throw new Invalid(path, 'Input should be a valid list');
      return v.map((x, i) => validateValue(type.items, x, join(path, String(i))));
    case 'model':
      return validateModel(type.name, v, path);
    case 'union': {
      let first: Invalid | null = null;
      for (const t of type.of) {
        try {
          return validateValue(t, v, path);
        } catch (e) {
          if (!(e instanceof Invalid)) throw e;
          first ??= e;
        }
      }
      throw first!;
    }
  }
}

/** pydantic's lax int: an integer, a float without a fraction, or a string of digits. */
function asInt(v: unknown, path: string): number | LosslessNumber {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  const text = isLosslessNumber(v) ? (v as LosslessNumber).value : typeof v === 'string' ? v.trim() : null;
  if (text !== null && /^-?\d+(\.0*)?$/.test(text)) {
    const digits = text.replace(/\.0*$/, '');
    const n = Number(digits);
    return Number.isSafeInteger(n) ? n : new LosslessNumber(digits);
  }
  throw new Invalid(path, 'Input should be a valid integer');
}

/** pydantic's lax float: a number or a numeric string, stored as a float (`1` becomes `1.0`). */
function asFloat(v: unknown, path: string): number | LosslessNumber {
  let n: number | null = null;
  if (typeof v === 'number') n = v;
  else if (isLosslessNumber(v)) n = Number((v as LosslessNumber).value);
  else if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) n = Number(v);
  if (n === null || Number.isNaN(n)) throw new Invalid(path, 'Input should be a valid number');
  // An integral value would be written as a Python int: keep it a float (`1.0`, `1e+20`).
  if (Number.isInteger(n)) return new LosslessNumber(Number.isSafeInteger(n) ? `${n}.0` : n.toExponential());
  return isLosslessNumber(v) ? (v as LosslessNumber) : n;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

function isDict(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}
