// The app's top-level views and how a location hash maps to one.
// Hash routing keeps deep links (`#/tools`) working under tauri:// without a router.

export type ViewId =
  | 'servers'
  | 'catalog'
  | 'tools'
  | 'profiles'
  | 'resources'
  | 'gateway'
  | 'activity'
  | 'accounts'
  | 'sources'
  | 'logs'
  | 'history'
  | 'settings';

export interface ViewDef {
  id: ViewId;
  label: string;
  /** One line under the title in the header. */
  blurb: string;
}

export const VIEWS: readonly ViewDef[] = [
  {
    id: 'servers',
    label: 'Servers',
    blurb: 'Every MCP server configured on this machine, and whether it is up.',
  },
  {
    id: 'catalog',
    label: 'Catalog',
    blurb:
      'Find servers in the MCP Registry and install them with a form: versions pinned, secrets in your keychain.',
  },
  {
    id: 'tools',
    label: 'Tools',
    blurb: 'What each server offers, under the name your clients see.',
  },
  {
    id: 'profiles',
    label: 'Profiles',
    blurb:
      'Named sets of servers and tools for a task or a client, and what each costs in context.',
  },
  {
    id: 'resources',
    label: 'Resources & prompts',
    blurb:
      'Read what a connected server offers, follow resources as they change, and try its prompts.',
  },
  {
    id: 'gateway',
    label: 'Gateway',
    blurb:
      'One MCP entry for every client: the servers Switchboard runs, signed in and supervised.',
  },
  {
    id: 'activity',
    label: 'Activity',
    blurb:
      'Every call your clients made through the gateway and the Tools and Resources views: what was asked, what came back, how long it took.',
  },
  {
    id: 'accounts',
    label: 'Accounts',
    blurb:
      'Every sign-in Switchboard keeps in your keychain for remote servers, and when it expires.',
  },
  {
    id: 'sources',
    label: 'Sources',
    blurb: 'The config files Switchboard reads, in priority order.',
  },
  { id: 'logs', label: 'Logs', blurb: 'Server output and lifecycle events, live.' },
  {
    id: 'history',
    label: 'History',
    blurb:
      'Every change Switchboard made to a config file, with what it held before. Undo any of them.',
  },
  { id: 'settings', label: 'Settings', blurb: 'How Switchboard behaves on this machine.' },
];

export const DEFAULT_VIEW: ViewId = 'servers';

/** `#/tools`, `#tools`, `#/tools/some-server` → `tools`; anything unknown → the default. */
export function viewFromHash(hash: string): ViewId {
  const first = hash.replace(/^#\/?/, '').split(/[/?]/)[0]?.toLowerCase() ?? '';
  const match = VIEWS.find((v) => v.id === first);
  return match ? match.id : DEFAULT_VIEW;
}

/** `#/servers/github` → `github` (the item a view shows in detail). */
export function subFromHash(hash: string): string | null {
  const rest = hash.replace(/^#\/?/, '').split('?')[0].split('/').slice(1).join('/');
  return rest ? decodeURIComponent(rest) : null;
}

export function hashFor(view: ViewId, sub?: string | null): string {
  return sub ? `#/${view}/${encodeURIComponent(sub)}` : `#/${view}`;
}

export function viewDef(view: ViewId): ViewDef {
  return VIEWS.find((v) => v.id === view) ?? VIEWS[0];
}
