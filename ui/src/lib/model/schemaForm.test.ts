import { describe, expect, it } from 'vitest';
import { collectValues, fieldsFromSchema, initialValues } from './schemaForm';

const schema = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What to look for' },
    limit: { type: 'integer', default: 10 },
    ratio: { type: 'number' },
    exact: { type: 'boolean', default: true },
    mode: { type: 'string', enum: ['fast', 'slow'], default: 'slow' },
    size: {
      oneOf: [
        { const: 's', title: 'Small' },
        { const: 'l', title: 'Large' },
      ],
    },
    filter: { type: 'object', properties: { a: { type: 'string' } } },
    tags: { type: ['array', 'null'], items: { type: 'string' } },
  },
  required: ['query'],
};

describe('schema → form', () => {
  it('maps each property to a field kind', () => {
    const f = fieldsFromSchema(schema);
    expect(f.map((x) => [x.name, x.kind])).toEqual([
      ['query', 'string'],
      ['limit', 'integer'],
      ['ratio', 'number'],
      ['exact', 'boolean'],
      ['mode', 'enum'],
      ['size', 'enum'],
      ['filter', 'json'],
      ['tags', 'json'],
    ]);
    expect(f[0]).toMatchObject({ required: true, description: 'What to look for' });
    expect(f[5].options.map((o) => o.label)).toEqual(['Small', 'Large']);
  });

  it('fills in defaults', () => {
    const v = initialValues(fieldsFromSchema(schema));
    expect(v).toMatchObject({ query: '', limit: '10', exact: true, mode: '1', filter: '' });
  });

  it('collects typed values, leaves out empty optional ones, and reports errors', () => {
    const fields = fieldsFromSchema(schema);
    const v = initialValues(fields);
    expect(collectValues(fields, v).errors).toEqual({ query: 'Required' });
    v.query = 'cats';
    v.ratio = '0.5';
    v.size = '0';
    v.filter = '{"a": "b"}';
    const ok = collectValues(fields, v);
    expect(ok.errors).toEqual({});
    expect(ok.value).toEqual({
      query: 'cats',
      limit: 10,
      ratio: 0.5,
      exact: true,
      mode: 'slow',
      size: 's',
      filter: { a: 'b' },
    });
    v.limit = '1.5';
    v.tags = '[oops';
    const bad = collectValues(fields, v).errors;
    expect(bad.limit).toBe('Enter a whole number');
    expect(bad.tags).toMatch(/^Not valid JSON/);
  });

  it('reads number inputs, which Svelte binds as numbers (null when empty)', () => {
    const fields = fieldsFromSchema({
      type: 'object',
      properties: { ms: { type: 'integer' } },
      required: ['ms'],
    });
    expect(collectValues(fields, { ms: 60000 as unknown as string }).value).toEqual({ ms: 60000 });
    expect(collectValues(fields, { ms: null as unknown as string }).errors).toEqual({
      ms: 'Required',
    });
  });

  it('handles a schema without properties', () => {
    expect(fieldsFromSchema({ type: 'object' })).toEqual([]);
    expect(fieldsFromSchema(undefined)).toEqual([]);
  });
});
