import { describe, expect, it } from 'vitest';
import {
  copyOf,
  fieldErrors,
  initialValues,
  progressText,
  requestValues,
  signatureBadge,
  size,
} from './bundle';
import type { BundleField, BundleView, InstalledCopy } from '../types';

const field = (f: Partial<BundleField> & { key: string }): BundleField => ({
  kind: 'string',
  title: '',
  description: '',
  required: false,
  defaults: [],
  sensitive: false,
  multiple: false,
  ...f,
});

const view = (fields: BundleField[], installed: InstalledCopy[] = []): BundleView => ({
  id: 1,
  file: '/tmp/x.mcpb',
  name: 'hello',
  version: '1.3.0',
  description: '',
  signature: { status: 'unsigned' },
  signatureText: 'unsigned',
  compatible: true,
  problems: [],
  found: [],
  fields,
  files: 2,
  unpackedSize: 100,
  unpackDir: '/data/bundles/hello/1.3.0',
  installed,
});

const fields = [
  field({ key: 'api_key', sensitive: true, required: true }),
  field({ key: 'greeting', defaults: ['hello'] }),
  field({ key: 'port', kind: 'number', min: 1, max: 65535, required: true }),
  field({ key: 'verbose', kind: 'boolean', defaults: ['true'] }),
  field({ key: 'dirs', kind: 'directory', multiple: true, defaults: ['/a', '/b'] }),
];

describe('bundle form', () => {
  it('starts from defaults, secrets empty, lists one per line', () => {
    expect(initialValues(view(fields))).toEqual({
      api_key: '',
      greeting: 'hello',
      port: '',
      verbose: 'true',
      dirs: '/a\n/b',
    });
  });

  it('an update starts from the server’s current values and keeps its secret', () => {
    const copy: InstalledCopy = {
      server: 'hello',
      source: 'switchboard',
      version: '1.2.0',
      values: { greeting: ['hi'], port: ['8080'] },
      kept: ['api_key'],
    };
    const v = view(fields, [copy]);
    expect(copyOf(v, { server: 'hello', source: 'switchboard' })).toBe(copy);
    expect(copyOf(v, { server: 'hello', source: 'cursor-user' })).toBeUndefined();
    const values = initialValues(v, copy);
    expect(values.greeting).toBe('hi');
    expect(values.api_key).toBe('');
    // The secret left empty is kept, so it is not "required".
    expect(fieldErrors(v, values, copy)).toEqual({});
  });

  it('names what is wrong with each value', () => {
    const v = view(fields);
    const values = { ...initialValues(v), port: 'eighty' };
    expect(fieldErrors(v, values)).toEqual({
      api_key: 'Required.',
      port: '“eighty” is not a number.',
    });
    expect(fieldErrors(v, { ...values, api_key: 'k', port: '70000' })).toEqual({
      port: 'Between 1 and 65535.',
    });
    expect(fieldErrors(v, { ...values, api_key: 'k', port: ' 443 ' })).toEqual({});
  });

  it('sends a list per key, blank lines dropped', () => {
    const v = view(fields);
    expect(
      requestValues(v, {
        api_key: 's',
        greeting: '',
        port: ' 80 ',
        verbose: 'false',
        dirs: '/x\n\n/y',
      }),
    ).toEqual({
      api_key: ['s'],
      greeting: [],
      port: ['80'],
      verbose: ['false'],
      dirs: ['/x', '/y'],
    });
  });

  it('says how far a signature can be trusted', () => {
    expect(signatureBadge({ status: 'unsigned' }).tone).toBe('warn');
    expect(signatureBadge({ status: 'self_signed', subject: 'Me', fingerprint: 'ab' }).label).toBe(
      'Self-signed',
    );
    const trusted = signatureBadge({
      status: 'signed',
      subject: 'Acme',
      issuer: 'CA',
      fingerprint: 'ab',
      trusted: true,
    });
    expect([trusted.tone, trusted.label]).toEqual(['ok', 'Verified']);
    expect(signatureBadge({ status: 'invalid', reason: 'digest differs' })).toMatchObject({
      tone: 'danger',
      detail: 'digest differs',
    });
  });

  it('reports unpacking in words', () => {
    expect(size(512)).toBe('512 B');
    expect(size(50 * 1024 * 1024)).toBe('50 MB');
    expect(progressText({ id: 1, done: 512, total: 1024, state: 'unpacking' })).toEqual({
      text: 'Unpacking… 512 B of 1.0 KB',
      fraction: 0.5,
    });
    expect(progressText({ id: 1, done: 9, total: 9, state: 'ready' }).fraction).toBe(1);
    expect(
      progressText({ id: 1, done: 0, total: 9, state: 'failed', error: 'disk full' }).text,
    ).toContain('disk full');
  });
});
