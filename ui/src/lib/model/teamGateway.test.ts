import { describe, expect, it } from 'vitest';
import { isTeamGateway, nameFromUrl, teamGatewayDef, teamSummary, urlError } from './teamGateway';

describe('team gateways', () => {
  it('names a gateway after whose it is, not after "mcp"', () => {
    expect(nameFromUrl('https://mcp.acme.example/mcp', [])).toBe('acme');
    expect(nameFromUrl('https://acme.example/mcp', [])).toBe('acme');
    expect(nameFromUrl('https://gateway.eu.globex.com/mcp', [])).toBe('globex');
    expect(nameFromUrl('https://intranet/mcp', [])).toBe('intranet');
    expect(nameFromUrl('http://127.0.0.1:8080/mcp', [])).toBe('team');
    expect(nameFromUrl('http://localhost:8080/mcp', [])).toBe('team');
    expect(nameFromUrl('http://[::1]:8080/mcp', [])).toBe('team');
    expect(nameFromUrl('https://mcp.acme.example/mcp', ['acme'])).toBe('acme-2');
    expect(nameFromUrl('not a url', [])).toBe('');
  });

  it('takes http and https URLs only', () => {
    expect(urlError('')).toMatch(/required/);
    expect(urlError('mcp.acme.example')).toMatch(/Not a URL/);
    expect(urlError('ftp://acme.example/mcp')).toMatch(/https/);
    expect(urlError(' https://mcp.acme.example/mcp ')).toBeNull();
    expect(urlError('http://127.0.0.1:8080/mcp')).toBeNull();
  });

  it('writes the URL alone, and says what the gateway serves', () => {
    expect(teamGatewayDef(' acme ', ' https://mcp.acme.example/mcp ')).toEqual({
      name: 'acme',
      transport: 'http',
      url: 'https://mcp.acme.example/mcp',
      enabled: true,
    });
    const tool = (name: string) => ({ name, tool: `mcp_x_${name}` });
    expect(
      teamSummary([
        { name: 'github', tools: [tool('a'), tool('b')] },
        { name: 'jira', tools: [tool('c')] },
      ]),
    ).toBe('github (2 tools), jira (1 tool)');
    expect(isTeamGateway({ source: 'team' })).toBe(true);
    expect(isTeamGateway({ source: 'switchboard' })).toBe(false);
  });
});
