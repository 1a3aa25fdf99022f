// A form from a JSON Schema (tool inputs, elicitation requests): one field per
// top-level property. Strings, numbers, integers, booleans and enums get their
// own inputs; anything else (objects, arrays, unions) is edited as JSON.

import type { JsonSchema } from '../types';

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export interface Field {
  name: string;
  kind: FieldKind;
  label: string;
  description: string | null;
  required: boolean;
  /** For `enum`: the allowed values and how each is shown. */
  options: { value: unknown; label: string }[];
  default: unknown;
  /** `email`, `uri`, `date`, … for strings. */
  format: string | null;
}

/** Form state: text for text-like inputs, booleans for switches. */
export type FormValues = Record<string, string | boolean>;

type Prop = Record<string, unknown>;

function typeOf(p: Prop): string | null {
  const t = p.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) return (t.find((x) => x !== 'null') as string | undefined) ?? null;
  return null;
}

function enumOptions(p: Prop): { value: unknown; label: string }[] | null {
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? (p.enumNames as string[]) : [];
    return p.enum.map((v, i) => ({ value: v, label: names[i] ?? String(v) }));
  }
  const alts = (p.oneOf ?? p.anyOf) as Prop[] | undefined;
  if (Array.isArray(alts) && alts.length > 0 && alts.every((a) => a && 'const' in a)) {
    return alts.map((a) => ({ value: a.const, label: String(a.title ?? a.const) }));
  }
  return null;
}

export function fieldsFromSchema(schema: JsonSchema | null | undefined): Field[] {
  const props = (schema?.properties ?? {}) as Record<string, Prop>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(props).map(([name, p]) => {
    p = p && typeof p === 'object' ? p : {};
    const options = enumOptions(p);
    const t = typeOf(p);
    const kind: FieldKind = options
      ? 'enum'
      : t === 'string' || t === 'number' || t === 'integer' || t === 'boolean'
        ? t
        : 'json';
    return {
      name,
      kind,
      label: typeof p.title === 'string' ? p.title : name,
      description: typeof p.description === 'string' ? p.description : null,
      required: required.has(name),
      options: options ?? [],
      default: p.default,
      format: typeof p.format === 'string' ? p.format : null,
    };
  });
}

/** Defaults filled in from the schema; enums hold the index of their option. */
export function initialValues(fields: Field[]): FormValues {
  const out: FormValues = {};
  for (const f of fields) {
    const d = f.default;
    switch (f.kind) {
      case 'boolean':
        out[f.name] = d === true;
        break;
      case 'enum': {
        const i = f.options.findIndex((o) => JSON.stringify(o.value) === JSON.stringify(d));
        out[f.name] = i >= 0 ? String(i) : '';
        break;
      }
      case 'json':
        out[f.name] = d === undefined ? '' : JSON.stringify(d, null, 2);
        break;
      default:
        out[f.name] = d === undefined || d === null ? '' : String(d);
    }
  }
  return out;
}

/** The value to send, or an error per field. Empty optional fields are left out. */
export function collectValues(
  fields: Field[],
  values: FormValues,
): { value: Record<string, unknown>; errors: Record<string, string> } {
  const value: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const f of fields) {
    const raw = values[f.name];
    if (f.kind === 'boolean') {
      value[f.name] = raw === true;
      continue;
    }
    // Svelte's bind:value on <input type="number"> holds a number (or null when empty).
    const text =
      typeof raw === 'string'
        ? raw
        : typeof raw === 'number' && Number.isFinite(raw)
          ? String(raw)
          : '';
    if (text.trim() === '') {
      if (f.required) errors[f.name] = 'Required';
      continue;
    }
    switch (f.kind) {
      case 'number':
      case 'integer': {
        const n = Number(text);
        if (!Number.isFinite(n)) errors[f.name] = 'Enter a number';
        else if (f.kind === 'integer' && !Number.isInteger(n))
          errors[f.name] = 'Enter a whole number';
        else value[f.name] = n;
        break;
      }
      case 'enum': {
        const o = f.options[Number(text)];
        if (o) value[f.name] = o.value;
        else errors[f.name] = 'Pick one of the options';
        break;
      }
      case 'json':
        try {
          value[f.name] = JSON.parse(text);
        } catch (e) {
          errors[f.name] = `Not valid JSON: ${(e as Error).message}`;
        }
        break;
      default:
        value[f.name] = text;
    }
  }
  return { value, errors };
}

/** The `<input type>` for a string field's format. */
export function inputType(f: Field): string {
  if (f.kind === 'number' || f.kind === 'integer') return 'number';
  switch (f.format) {
    case 'email':
      return 'email';
    case 'uri':
      return 'url';
    case 'date':
      return 'date';
    case 'date-time':
      return 'datetime-local';
    default:
      return 'text';
  }
}
