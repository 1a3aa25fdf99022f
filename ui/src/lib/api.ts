// The one place that talks to the Rust side: every `invoke` and `listen`
// goes through here, so commands, their argument shapes and error handling
// live in one file and tests can mock a single module.

import { invoke, isTauri, type InvokeArgs } from '@tauri-apps/api/core';
import { listen, type EventCallback, type UnlistenFn } from '@tauri-apps/api/event';
import type {
  AccountList,
  BundleInstalled,
  BundleOrigin,
  BundlePreview,
  BundleProgress,
  BundleView,
  CleanedUp,
  ActivityExport,
  Aggregates,
  ExportFormat,
  Filter,
  Page,
  Stats,
  CatalogPage,
  CatalogServer,
  InstallChoice,
  InstallReport,
  LinkInstall,
  LinkInstalled,
  JournalSettings,
  JournalStatus,
  TelemetrySettings,
  TelemetryStatus,
  ResultMode,
  RegistrySettings,
  RuntimeCheck,
  AppInfo,
  ApplyReport,
  ApprovalMode,
  Approved,
  CallOutcome,
  ClientConnection,
  ClientCost,
  ClientSecretStatus,
  CommandErrorPayload,
  ConnectPlan,
  AppSettings,
  CopyPlan,
  Connected,
  DisconnectReport,
  ChannelEvent,
  EntryText,
  Exported,
  GatewaySettings,
  GatewayStatus,
  HistoryEntry,
  ImportOptions,
  ImportPreview,
  ImportReport,
  LogLine,
  ProbeReport,
  ProfileChange,
  ProfileSource,
  ProfileView,
  ProjectFolder,
  PromptList,
  PromptResult,
  ResourceList,
  ResourceRead,
  ServerDef,
  ServerView,
  SignInStatus,
  SourceInfo,
  StepUp,
  ToolCost,
  ToolIndex,
  ServerDefaults,
  ToolsApproved,
  TrustReport,
  UndoReport,
  Via,
} from './types';
import type { ErrorCode } from './types';

/**
 * Why a command failed: one of the Rust side's `ErrorCode`s, `not-in-app`
 * outside the desktop app, or `unknown` when the failure carried no code.
 */
export type FailureCode = ErrorCode | 'not-in-app' | 'unknown';

/** A failed command, with the `code` the Rust side chose and the command name. */
export class CommandError extends Error {
  readonly code: FailureCode;
  readonly command: string;

  constructor(command: string, code: FailureCode, message: string) {
    super(message);
    this.name = 'CommandError';
    this.code = code;
    this.command = command;
  }
}

function isPayload(value: unknown): value is CommandErrorPayload {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CommandErrorPayload).code === 'string' &&
    typeof (value as CommandErrorPayload).message === 'string'
  );
}

/** Turns whatever a rejected `invoke` carried into a `CommandError`. */
export function toCommandError(command: string, raw: unknown): CommandError {
  if (raw instanceof CommandError) return raw;
  if (isPayload(raw)) return new CommandError(command, raw.code, raw.message);
  if (typeof raw === 'string') return new CommandError(command, 'unknown', raw);
  if (raw instanceof Error) return new CommandError(command, 'unknown', raw.message);
  return new CommandError(command, 'unknown', `${command} failed: ${JSON.stringify(raw)}`);
}

/** True inside the desktop app; false in a plain browser (`npm run dev` alone). */
export function inApp(): boolean {
  return isTauri();
}

async function call<T>(command: string, args?: InvokeArgs): Promise<T> {
  if (!inApp()) {
    throw new CommandError(
      command,
      'not-in-app',
      'The Switchboard engine is only reachable inside the desktop app.',
    );
  }
  try {
    return await invoke<T>(command, args);
  } catch (raw) {
    throw toCommandError(command, raw);
  }
}

/** Subscribes to one event stream from the Rust side; resolves to its unsubscribe. */
export async function subscribe<T>(event: string, handler: EventCallback<T>): Promise<UnlistenFn> {
  if (!inApp()) return () => {};
  return listen<T>(event, handler);
}

/** The one event name the Rust side forwards every engine event under. */
export const ENGINE_EVENT = 'engine://event';

/** Every engine event, as it happens: nothing polls. */
export function onEngineEvent(handler: (event: ChannelEvent) => void): Promise<UnlistenFn> {
  return subscribe<ChannelEvent>(ENGINE_EVENT, (e) => handler(e.payload));
}

type Json = Record<string, unknown>;

export type ElicitationAction = 'accept' | 'decline' | 'cancel';

export const api = {
  appInfo: () => call<AppInfo>('app_info'),
  listServers: () => call<ServerView[]>('list_servers'),
  listSources: () => call<SourceInfo[]>('list_sources'),
  listProjects: () => call<ProjectFolder[]>('list_projects'),
  listTools: () => call<ToolIndex>('list_tools'),
  /** With `callId`, the call can be cancelled by `cancelToolCall(callId)`; it then fails with code `aborted`. */
  callTool: (name: string, args: Json, callId?: string) =>
    call<CallOutcome>('call_tool', { name, args, callId: callId ?? null }),
  /** False when the call had already ended. */
  cancelToolCall: (callId: string) => call<boolean>('cancel_tool_call', { callId }),
  serverLogs: (name: string) => call<LogLine[]>('server_logs', { name }),
  diagnosticReport: (name: string) => call<string>('diagnostic_report', { name }),
  appSettings: () => call<AppSettings>('app_settings'),
  setKeepInTray: (keep: boolean) => call<void>('set_keep_in_tray', { keep }),
  setStartAtLogin: (on: boolean) => call<void>('set_start_at_login', { on }),
  setServerDefaults: (defaults: ServerDefaults) => call<void>('set_server_defaults', { defaults }),
  setProjectConfig: (enabled: boolean) => call<void>('set_project_config', { enabled }),
  openDataFolder: () => call<void>('open_data_folder'),
  planCopy: (name: string, from: string, to: string) =>
    call<CopyPlan>('plan_copy', { name, from, to }),
  copyServer: (name: string, from: string, to: string, moveIt: boolean) =>
    call<void>('copy_server', { name, from, to, moveIt }),
  renameServer: (source: string, from: string, to: string, contentHash?: string) =>
    call<void>('rename_server', { source, from, to, contentHash }),
  startServer: (name: string) => call<void>('start_server', { name }),
  stopServer: (name: string) => call<void>('stop_server', { name }),
  restartServer: (name: string) => call<void>('restart_server', { name }),
  setEnabled: (source: string, name: string, enabled: boolean, contentHash?: string) =>
    call<void>('set_enabled', { source, name, enabled, contentHash: contentHash ?? null }),
  /**
   * `contentHash`: the source's hash as the user saw it; when the file has
   * changed since, the edit is refused with code `conflict`.
   */
  addServer: (source: string, def: ServerDef, contentHash?: string) =>
    call<void>('add_server', { source, def, contentHash: contentHash ?? null }),
  /** Writes only the fields where `def` differs from `original` (what the form was opened with). */
  updateServer: (
    source: string,
    name: string,
    def: ServerDef,
    original: ServerDef,
    contentHash?: string,
  ) =>
    call<void>('update_server', { source, name, def, original, contentHash: contentHash ?? null }),
  /** `def` as an entry of `source`'s file, in that client's format and field names. */
  entryText: (source: string, def: ServerDef) => call<EntryText>('entry_text', { source, def }),
  /** Reads an entry typed by the user; the error names the line or field. */
  parseEntryText: (source: string, name: string, text: string) =>
    call<ServerDef>('parse_entry_text', { source, name, text }),
  /** Removes a server; one from a `.mcpb` bundle takes its folder and keychain items along. */
  removeServer: (source: string, name: string, contentHash?: string) =>
    call<CleanedUp>('remove_server', { source, name, contentHash: contentHash ?? null }),
  setPriority: (ids: string[]) => call<void>('set_priority', { ids }),
  promote: (name: string, source: string) => call<void>('promote', { name, source }),
  addProject: (path: string, trusted: boolean) => call<void>('add_project', { path, trusted }),
  removeProject: (path: string) => call<void>('remove_project', { path }),
  /**
   * Runs the held servers of a project folder (all, or only `server`): changed
   * since the folder was trusted, or not approved in Claude Code.
   */
  approveProject: (path: string, server?: string) =>
    call<Approved>('approve_project', { path, server: server ?? null }),
  listResources: (server: string) => call<ResourceList>('list_resources', { server }),
  readResource: (server: string, uri: string) =>
    call<ResourceRead>('read_resource', { server, uri }),
  listPrompts: (server: string) => call<PromptList>('list_prompts', { server }),
  getPrompt: (server: string, name: string, args: Json) =>
    call<PromptResult>('get_prompt', { server, name, args }),
  subscribeResource: (server: string, uri: string) =>
    call<void>('subscribe_resource', { server, uri }),
  unsubscribeResource: (server: string, uri: string) =>
    call<void>('unsubscribe_resource', { server, uri }),
  // ---- the Catalog: the MCP Registry (issue 13) ----
  /** One page of servers matching `query` (latest versions; deleted ones left out). `offline` is set when these are cached results. */
  registrySearch: (query: string, cursor?: string | null) =>
    call<CatalogPage>('registry_search', { query, cursor: cursor ?? null }),
  /** One server (a version, default the latest): its versions and an install form per package or remote. */
  registryServer: (name: string, version?: string | null) =>
    call<CatalogServer>('registry_server', { name, version: version ?? null }),
  /** Whether `npx`, `uvx`, `docker` or `dnx` is installed, and what to install when not. */
  checkRuntime: (program: string) => call<RuntimeCheck>('check_runtime', { program }),
  /**
   * Installs into `target`; into Switchboard's own list secrets go to the keychain.
   * Fails with code `name_taken` (send `replace: true` to replace it) or `missing_values`.
   */
  installServer: (request: {
    server: unknown;
    choice: InstallChoice;
    name: string;
    target: string;
    values: Record<string, string>;
    replace?: boolean;
  }) =>
    call<InstallReport>('install_server', {
      request: { ...request, replace: request.replace ?? false },
    }),
  // ---- install links and pasted entries (issue 31) ----
  /** What a VS Code / Cursor / LM Studio / switchboard:// link or a pasted server entry asks to install; writes nothing. */
  readInstallLink: (text: string) => call<LinkInstall>('read_install_link', { text }),
  /**
   * Installs server `serverIndex` of the link into `target` under `name`, with `inputs` by input id;
   * into Switchboard's own list password inputs go to the keychain. Fails with `name-taken` or `missing-values`.
   */
  /**
   * The `switchboard://` links opened from the desktop (browser, xdg-open) since the last call,
   * oldest first; each is returned once. Call at start and after each `install-links` event.
   */
  takeInstallLinks: () => call<string[]>('take_install_links'),
  installFromLink: (request: {
    text: string;
    serverIndex: number;
    name: string | null;
    inputs: Record<string, string>;
    target: string;
  }) => call<LinkInstalled>('install_from_link', { ...request }),
  /** Moves an env (`env`) or header (`header`) value of a server in Switchboard's own list into the keychain. */
  keepInKeychain: (server: string, group: 'env' | 'header', key: string) =>
    call<string>('keep_in_keychain', { server, group, key }),
  /** Opens a repository or website link in the system browser (https, or http on this computer, only). */
  openCatalogLink: (url: string) => call<void>('open_catalog_link', { url }),
  /** A native file (or folder) picker; `null` when the user cancelled. */
  /** A native picker; `filter`: a name then extensions (`['Claude Desktop extension', 'mcpb']`). */
  pickPath: (directory: boolean, filter?: string[]) =>
    call<string | null>('pick_path', { directory, filter: filter ?? null }),
  /** Checks a `.mcpb` and returns its form; it unpacks in the background (`bundle-progress` events). */
  openBundle: (path: string) => call<BundleView>('open_bundle', { path }),
  bundleProgress: (id: number) => call<BundleProgress>('bundle_progress', { id }),
  /** The exact definition the values make (secrets masked) and where it goes; nothing is written. */
  previewBundle: (request: BundleRequest) => call<BundlePreview>('preview_bundle', { request }),
  installBundle: (request: BundleRequest) => call<BundleInstalled>('install_bundle', { request }),
  /** Closes a bundle's form without installing: what was unpacked goes. */
  closeBundle: (id: number) => call<void>('close_bundle', { id }),
  bundleOrigin: (source: string, name: string) =>
    call<BundleOrigin | null>('bundle_origin', { source, name }),
  registrySettings: () => call<RegistrySettings>('registry_settings'),
  /** Saves the registry URL (`null`: the official registry). */
  setRegistryUrl: (url: string | null) => call<RegistrySettings>('set_registry_url', { url }),
  testConnection: (def: ServerDef, source?: string) =>
    call<ProbeReport>('test_connection', { def, source }),
  answerElicitation: (id: number, action: ElicitationAction, content?: Json) =>
    call<void>('answer_elicitation', { id, action, content: content ?? null }),
  /** Opens the authorization page in the system browser; resolves once signed in. */
  signIn: (name: string) => call<void>('sign_in', { name }),
  cancelSignIn: (name: string) => call<void>('cancel_sign_in', { name }),
  signOut: (name: string) => call<void>('sign_out', { name }),
  signInStatus: (name: string) => call<SignInStatus>('sign_in_status', { name }),
  /** Every sign-in kept for a configured server (nothing secret), and the keychain they are in. */
  listAccounts: () => call<AccountList>('list_accounts'),
  /** Signs out of every listed sign-in; resolves to the servers signed out. */
  signOutEverywhere: () => call<string[]>('sign_out_everywhere'),
  /**
   * Keeps the client secret of a server's pre-registered OAuth app in the
   * keychain (never in a file); `null` deletes it.
   */
  setOAuthClientSecret: (name: string, secret: string | null) =>
    call<void>('set_oauth_client_secret', { name, secret }),
  /** Whether a client secret is kept for the server's OAuth app (never the secret itself). */
  oauthClientSecretStatus: (name: string) =>
    call<ClientSecretStatus>('oauth_client_secret_status', { name }),
  /** The scopes and reason of the server's last `insufficient_scope` answer; null when it asked for none. */
  stepUp: (name: string) => call<StepUp | null>('step_up', { name }),
  /** Every write Switchboard made to a file, newest first. */
  listHistory: () => call<HistoryEntry[]>('list_history'),
  /** Fails with code `conflict` (naming the file) when the file changed since Switchboard wrote it. */
  undo: (id: number) => call<UndoReport>('undo', { id }),
  /** The app's HTTP gateway: listener, connected clients, calls, tool count and switches. */
  gatewayStatus: () => call<GatewayStatus>('gateway_status'),
  /** Saves the gateway settings and restarts its listener with them. */
  setGatewaySettings: (settings: GatewaySettings) =>
    call<GatewayStatus>('set_gateway_settings', { settings }),
  /** The bearer token HTTP clients send (shown only when the user asks). */
  gatewayToken: () => call<string>('gateway_token'),
  /** Switch one tool (server and raw tool name) on or off for the gateway. */
  setToolEnabled: (server: string, tool: string, on: boolean) =>
    call<void>('set_tool_enabled', { server, tool, on }),
  /** Leave a whole server out of the gateway (it keeps running for the app), or serve it again. */
  setGatewayExcluded: (server: string, excluded: boolean) =>
    call<void>('set_gateway_excluded', { server, excluded }),
  /** "Use Switchboard in…": every client with a user file, and its gateway entry. */
  listConnections: () => call<ClientConnection[]>('list_connections'),
  /** What connecting would write (over HTTP, or running the bundled `switchboard serve`); writes nothing. */
  planConnect: (client: string, http: boolean, disableDuplicates: boolean) =>
    call<ConnectPlan>('plan_connect', { client, http, disableDuplicates }),
  /** Writes the entry; a stdio entry only after the bundled binary answered an MCP handshake (code `sidecar-failed` if not). */
  connectClient: (client: string, http: boolean, disableDuplicates: boolean) =>
    call<Connected>('connect_client', { client, http, disableDuplicates }),
  /** Removes the entry and turns back on what connect turned off. */
  disconnectClient: (client: string) => call<DisconnectReport>('disconnect_client', { client }),
  /** Every server's tools, prompts and templates against what the user approved: pin, findings, diffs, held. */
  toolReview: () => call<TrustReport>('tool_review'),
  /** Approve `tools` (raw names; every item when empty) of a connected server as it offers them now. */
  approveTools: (server: string, tools: string[]) =>
    call<ToolsApproved>('approve_tools', { server, tools }),
  /** What the gateway holds back of a server until approved. */
  setApprovalMode: (server: string, mode: ApprovalMode) =>
    call<void>('set_approval_mode', { server, mode }),
  // ---- profiles (issue 28) ----
  /** Every profile, Everything first: servers (missing ones too), tools, tokens, clients using it. */
  listProfiles: () => call<ProfileView[]>('list_profiles'),
  /** Every tool's definition cost in tokens (counted with the tokenizer the profiles name). */
  toolCosts: () => call<ToolCost[]>('tool_costs'),
  /** Create, rename, delete a profile, or change its servers or tools; the error is the engine's message. */
  changeProfile: (change: ProfileChange) => call<void>('change_profile', { change }),
  /** What the gateway's `/mcp` serves from now on (its clients hear `list_changed`). */
  switchProfile: (name: string) => call<void>('switch_profile', { name }),
  /**
   * Apply a profile to a client: in its own file (exactly its servers on, the
   * others off; undo in History) or through the gateway (one `switchboard`
   * entry serving it). `follow`: the client moves with the header's switch.
   */
  applyProfile: (client: string, profile: string, via: Via, follow: boolean) =>
    call<ApplyReport>('apply_profile', { client, profile, via, follow }),
  /** What each client with a config file loads now, in tokens, against its budget. */
  clientCosts: () => call<ClientCost[]>('client_costs'),
  /**
   * Writes profile `name` to `path` (`~/` is the home folder) with every
   * secret a reference; an existing file only with `replace`.
   */
  exportProfile: (name: string, path: string, replace: boolean) =>
    call<Exported>('export_profile', { name, path, replace }),
  /** The system's save dialog at `fileName` in the home folder; `null` when cancelled. */
  pickSavePath: (fileName: string) => call<string | null>('pick_save_path', { fileName }),
  /** What importing a profile document would add, reuse or refuse here; nothing is written. */
  previewProfileImport: (source: ProfileSource, options: ImportOptions) =>
    call<ImportPreview>('preview_profile_import', { source, options }),
  /** Imports it; `values` (secrets by name) go to the keychain first. */
  importProfile: (source: ProfileSource, options: ImportOptions, values: Record<string, string>) =>
    call<ImportReport>('import_profile', { source, options, values }),
  // ---- activity: the call journal (issue 29) ----
  /** The calls `filter` matches: newest first, or newer than `afterId` oldest first. */
  activityQuery: (filter: Filter) => call<Page>('activity_query', { filter }),
  /** The plots' data: calls and errors per server over time, latency percentiles, busiest tools. */
  activityAggregates: (filter: Filter) => call<Aggregates>('activity_aggregates', { filter }),
  /** Entries written and dropped, and the journal's last problem. */
  activityStats: () => call<Stats>('activity_stats'),
  /** Writes the calls `filter` matches to `path` (`~/` is home); an existing file only with `replace`. */
  activityExport: (filter: Filter, format: ExportFormat, path: string, replace: boolean) =>
    call<ActivityExport>('activity_export', { filter, format, path, replace }),
  /** What the journal keeps, how many calls it holds, its size on disk and how it is doing. */
  journalStatus: () => call<JournalStatus>('journal_status'),
  /** How long and how much the journal keeps (each at least 1); applies at once. */
  setJournalLimits: (limits: JournalSettings) => call<void>('set_journal_limits', { limits }),
  /** The OpenTelemetry export's settings and how it is doing (spans sent, failed, last problem). */
  telemetryStatus: () => call<TelemetryStatus>('telemetry_status'),
  /** Turns the export of each call as a span on or off, or sends it elsewhere; applies at once. */
  setTelemetry: (telemetry: TelemetrySettings) => call<void>('set_telemetry', { telemetry }),
  /** Each server's mode for checks on what it returns, where it is not the default (warn). */
  resultChecks: () => call<Partial<Record<string, ResultMode>>>('result_checks'),
  /** What is done when a server's answer looks suspicious: log, warn or block; applies at once. */
  setResultCheck: (server: string, mode: ResultMode) =>
    call<void>('set_result_check', { server, mode }),
};

/** What the bundle form sends to preview and install (values by `user_config` key). */
export type BundleRequest = {
  id: number;
  name: string | null;
  target: string;
  values: Record<string, string[]>;
  replace: boolean;
  skipRuntimeCheck: boolean;
};
