import { describe, expect, it, vi } from 'vitest';
import type { InstallField, InstallForm, SourceInfo } from '../types';
import {
  debounce,
  keepable,
  fieldError,
  fieldLabel,
  formErrors,
  freeName,
  hasSecretValues,
  initialValues,
  inputKind,
  installTargets,
  nameError,
  offlineNote,
  runtimeNote,
  selectOptions,
} from './catalog';

const field = (over: Partial<InstallField>): InstallField => ({
  id: 'env:K',
  key: 'K',
  group: 'env',
  required: false,
  secret: false,
  format: 'string',
  repeated: false,
  ...over,
});

const form: InstallForm = {
  choice: { kind: 'package', index: 0 },
  label: 'npm @x/weather 1.2.0',
  runtime: 'npx',
  suggestedName: 'weather',
  fields: [
    field({
      id: 'arg:--name',
      key: '--name',
      group: 'argument',
      required: true,
      choices: ['fast', 'slow'],
    }),
    field({
      id: 'arg:data_dir',
      key: 'data_dir',
      group: 'argument',
      required: true,
      format: 'filepath',
    }),
    field({ id: 'env:API_KEY', key: 'API_KEY', required: true, secret: true }),
    field({ id: 'env:UNITS', key: 'UNITS', default: 'metric' }),
    field({ id: 'arg:--port', key: '--port', group: 'argument', format: 'number' }),
    field({ id: 'arg:ws', key: 'ws', group: 'argument', repeated: true }),
  ],
};

describe('install form', () => {
  it('fills defaults, and the first choice of a required select', () => {
    expect(initialValues(form)).toEqual({
      'arg:--name': 'fast',
      'arg:data_dir': '',
      'env:API_KEY': '',
      'env:UNITS': 'metric',
      'arg:--port': '',
      'arg:ws': '',
    });
  });

  it('marks what is missing or wrong, field by field', () => {
    const v = { ...initialValues(form), 'arg:--port': '80a' };
    expect(formErrors(form, v)).toEqual({
      'arg:data_dir': 'Required.',
      'env:API_KEY': 'Required.',
      'arg:--port': 'A number.',
    });
    expect(fieldError(form.fields[0], 'turbo')).toBe('Pick one of fast, slow.');
    expect(fieldError(field({ format: 'boolean' }), 'yes')).toBe('true or false.');
    expect(fieldError(field({ repeated: true, format: 'number' }), '1\n2\nx')).toBe('A number.');
    expect(
      formErrors(form, { ...v, 'arg:data_dir': '/d', 'env:API_KEY': 's', 'arg:--port': '8080' }),
    ).toEqual({});
  });

  it('picks the input: selects for choices and booleans, password for secrets, lines for repeated', () => {
    expect(form.fields.map(inputKind)).toEqual([
      'select',
      'text',
      'password',
      'text',
      'text',
      'lines',
    ]);
    expect(inputKind(field({ format: 'boolean' }))).toBe('select');
    expect(selectOptions(field({ format: 'boolean' }))).toEqual(['', 'true', 'false']);
    expect(selectOptions(form.fields[0])).toEqual(['fast', 'slow']);
  });

  it('labels fields by their key and what they are part of', () => {
    expect(fieldLabel(form.fields[0])).toBe('--name');
    expect(fieldLabel(field({ key: 'token', group: 'header', variableOf: 'Authorization' }))).toBe(
      'token (in Authorization)',
    );
  });

  it('knows when secrets were entered', () => {
    expect(hasSecretValues(form, initialValues(form))).toBe(false);
    expect(hasSecretValues(form, { 'env:API_KEY': 'x' })).toBe(true);
  });
});

describe('names', () => {
  it('checks names against the target and offers a free one', () => {
    expect(nameError('weather', ['weather'])).toContain('already exists');
    expect(nameError('we ather', [])).toContain('Only letters');
    expect(nameError('', [])).toBe('A name is required.');
    expect(nameError('weather', [])).toBeNull();
    expect(freeName('weather', ['weather', 'weather-2'])).toBe('weather-3');
    expect(freeName('wx', ['weather'])).toBe('wx');
  });
});

describe('notes', () => {
  it('says when offline results were fetched', () => {
    const t = Date.UTC(2026, 10, 30, 15, 5);
    const note = offlineNote({ fetchedAtMs: t, reason: 'connection refused' }, 'en-GB');
    expect(note).toContain('could not be reached (connection refused)');
    expect(note).toContain('2026');
  });

  it('explains a missing runtime and does not pretend', () => {
    expect(runtimeNote(null)).toBeNull();
    expect(runtimeNote({ program: 'npx', found: '/usr/bin/npx' })).toEqual({
      ok: true,
      text: 'npx is installed (/usr/bin/npx).',
    });
    const missing = runtimeNote({
      program: 'dnx',
      installHint: 'dnx comes with the .NET 10 SDK: install it',
    });
    expect(missing?.ok).toBe(false);
    expect(missing?.text).toBe(
      'dnx is not installed on this computer, so this server cannot start. Dnx comes with the .NET 10 SDK: install it.',
    );
  });
});

describe('targets and search', () => {
  it("lists Switchboard's own list first, then user files, then projects", () => {
    const s = (
      id: string,
      client: SourceInfo['client'],
      level: SourceInfo['level'],
      readOnly = false,
      project?: string,
    ) => ({ id, client, level, readOnly, project }) as SourceInfo;
    const sources = [
      s('cursor-project:/p', 'cursor', 'project', false, '/p'),
      s('mcp-json:/q', 'fallback', 'project', false, '/q'),
      s('cursor-project:/u', 'cursor', 'project', false, '/u'),
      s('cursor-user', 'cursor', 'user'),
      s('switchboard', 'switchboard', 'user'),
      s('managed', 'claude-code', 'managed'),
      s('ro', 'zed', 'user', true),
    ];
    const got = installTargets(sources, [
      { path: '/p', trusted: true },
      { path: '/u', trusted: false },
    ]);
    expect(got.map((x) => x.id)).toEqual(['switchboard', 'cursor-user', 'cursor-project:/p']);
  });

  it('debounces search as you type', () => {
    vi.useFakeTimers();
    const fn = vi.fn();
    const d = debounce(fn, 250);
    d('w');
    d('we');
    d('wea');
    vi.advanceTimersByTime(249);
    expect(fn).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(1);
    expect(fn).toHaveBeenCalledWith('wea');
    vi.useRealTimers();
  });
});

describe('keep in keychain', () => {
  it('offers it for written values only', () => {
    expect(keepable('ghp_abc')).toBe(true);
    expect(keepable('Bearer ghp_abc')).toBe(true);
    expect(keepable('${GITHUB_TOKEN}')).toBe(false);
    expect(keepable('!op read op://x')).toBe(false);
    expect(keepable('${keychain:gh.TOKEN}')).toBe(false);
    expect(keepable('')).toBe(false);
  });
});
