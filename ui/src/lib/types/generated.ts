// Generated from the Rust types by `cargo test -p switchboard-app types`.
// Do not edit: change the Rust side and run that test with UPDATE_TYPES=1.

/** A JSON Schema object (tool input, elicitation request). */
export type JsonSchema = { [key: string]: unknown };

/** Everything on the app's event channel: the engine's events and the app's own. */
export type ChannelEvent = EngineEvent | AppEvent;

export type Transport = "stdio" | "http" | "sse";

export type Level = "user" | "project" | "managed";

export type Format = "json" | "jsonc" | "toml" | "yaml";

export type Client = "switchboard" | "team" | "claude-desktop" | "claude-code" | "cursor" | "vscode" | "windsurf" | "zed" | "cline" | "roo" | "gemini" | "codex" | "goose" | "lmstudio" | "continue" | "fallback";

export type AuthConfig = { type: string, credentialId?: string, };

export type OAuthApp = { clientId?: string, 
/**
 * The 127.0.0.1/localhost port of the registered redirect URI
 * (`http://localhost:PORT/callback`, Claude Code's convention).
 */
callbackPort?: number, scopes?: Array<string>, 
/**
 * The exact registered redirect URI, when the client's file names one
 * (Gemini's `redirectUri`, e.g. `http://localhost:7777/oauth/callback`).
 */
redirectUri?: string, clientSecret?: string, };

export type RestartPolicy = { initialDelayMs: number, maxDelayMs: number, backoffMultiplier: number, maxRestartAttempts: number, };

export type ServerDef = { name: string, transport: Transport, command?: string, args?: Array<string>, env?: Record<string, string>, cwd?: string, url?: string, headers?: Record<string, string>, enabled: boolean, 
/**
 * Milliseconds.
 */
timeout?: number, auth?: AuthConfig, 
/**
 * A pre-registered OAuth app (remote servers).
 */
oauth?: OAuthApp, restartPolicy?: RestartPolicy, 
/**
 * Kept on round-trip; never used to grant anything.
 */
autoApprove?: Array<string>, };

export type ServerStatus = { "state": "connecting" } | { "state": "connected" } | { "state": "disabled" } | { "state": "failed", error: string, } | { "state": "needs-auth", message: string, } | { "state": "restarting", attempt: number, of: number, } | { "state": "disconnected" };

export type ServerState = { name: string, status: ServerStatus, transport: Transport, source?: string, toolCount: number, deferred: boolean, pid?: number, binary?: string, transportUsed?: string, protocolVersion?: string, 
/**
 * What the server said it is when it connected (`serverInfo`), while connected.
 */
serverInfo?: PeerInfo, warnings: Array<string>, lastError?: string, 
/**
 * Why it is not running, in plain words with what to do (while it is not connected).
 */
diagnosis?: Diagnosis, 
/**
 * Restarts since the server was last started by hand.
 */
restarts: number, };

export type PeerInfo = { name: string, version: string, };

export type TeamServer = { name: string, 
/**
 * Sorted by their name on the team server.
 */
tools: Array<TeamTool>, };

export type TeamTool = { 
/**
 * Its name on the team server (`create_issue`).
 */
name: string, 
/**
 * Its name as the team gateway lists it (`mcp_github_create_issue`).
 */
tool: string, };

export type FailureClass = "command-not-found" | "not-executable" | "exited-at-once" | "missing-value" | "bad-folder" | "handshake-timeout" | "not-mcp" | "connection-refused" | "host-not-found" | "tls" | "wrong-url" | "unauthorized" | "protocol-mismatch" | "invalid-config" | "crashed" | "other";

export type CopyPlan = { to: string, client: string, path: string, createsFile: boolean, 
/**
 * The entry as it will appear in the target file.
 */
entry?: string, 
/**
 * Why it cannot be written there.
 */
refusal?: string, 
/**
 * The target already defines a server of this name (it would be refused).
 */
nameTaken: boolean, 
/**
 * The target client reads its file only at start: what to do then.
 */
restartHint?: string, };

export type Diagnosis = { class: FailureClass, 
/**
 * One short line for the server's row.
 */
summary: string, 
/**
 * The whole explanation: what happened and what to do.
 */
detail: string, 
/**
 * What the transport or the system said, as it said it.
 */
error: string, };

export type ShadowedDef = { source: string, path: string, line?: number, transport: Transport, enabled: boolean, errors?: Array<string>, };

export type TrustChange = { 
/**
 * `command`, `args`, `cwd`, `url` or `env.NAME`.
 */
field: string, before?: string, after?: string, };

export type Held = { "kind": "not-approved", reason: string, } | { "kind": "changed", reason: string, changes: Array<TrustChange>, };

export type ServerView = { runtime?: ServerState, 
/**
 * A connected team gateway's team servers and their tools (`team_servers`).
 */
teamServers?: Array<TeamServer>, shadowed: Array<ShadowedDef>, source: string, path: string, line?: number, errors: Array<string>, warnings: Array<string>, 
/**
 * Set for entries only their client can run (a Zed extension).
 */
notRunnable?: string, 
/**
 * Parked by Switchboard (disabled in a client without an off switch).
 */
parked?: boolean, 
/**
 * Its file does not parse right now: this definition is from the last
 * good version, saved at this time (milliseconds since the Unix epoch).
 */
lastGoodAt?: number, 
/**
 * Valid and enabled, but not started until the user approves it (a
 * project server Claude Code would not run, or one that changed since
 * its folder was trusted).
 */
held?: Held, name: string, transport: Transport, command?: string, args?: Array<string>, env?: Record<string, string>, cwd?: string, url?: string, headers?: Record<string, string>, enabled: boolean, 
/**
 * Milliseconds.
 */
timeout?: number, auth?: AuthConfig, 
/**
 * A pre-registered OAuth app (remote servers).
 */
oauth?: OAuthApp, restartPolicy?: RestartPolicy, 
/**
 * Kept on round-trip; never used to grant anything.
 */
autoApprove?: Array<string>, };

export type ParseError = { 
/**
 * The whole message, starting with the file (and line).
 */
message: string, line?: number, column?: number, 
/**
 * When the last good version, whose servers keep running, was saved
 * (milliseconds since the Unix epoch); absent: there is none, so no
 * server of this file runs until it parses.
 */
lastGoodAt?: number, };

export type SourceInfo = { id: string, client: Client, clientName: string, level: Level, path: string, format: Format, exists: boolean, readOnly: boolean, priority: number, project?: string, serverCount: number, warnings: Array<string>, 
/**
 * Hex SHA-256 of the bytes read, for conflict checks on write.
 */
contentHash?: string, 
/**
 * When its client only reads the file at start: what to do after a
 * change for the client to use it.
 */
restartHint?: string, 
/**
 * The `ServerDef` fields (camelCase) this source's client can store,
 * then the `oauth.*` members it has a place for; a form offers only these.
 */
fields: Array<string>, 
/**
 * Set while the file exists but cannot be read or parsed; its servers
 * then come from its last good version, if Switchboard saw one.
 */
parseError?: ParseError, };

export type Approved = { 
/**
 * Servers that were held and may run now.
 */
servers: Array<string>, 
/**
 * Of those, the ones approved for Claude Code too (its approval list
 * in `~/.claude.json`).
 */
forClaudeCode: Array<string>, };

export type ProjectFolder = { path: string, trusted: boolean, };

export type ToolRef = { server: string, tool: string, };

export type Collision = { 
/**
 * The sanitized name they share.
 */
name: string, 
/**
 * Sorted by (server, tool); the first one kept `name`.
 */
tools: Array<ToolRef>, 
/**
 * The final name of each tool in `tools`, same order.
 */
resolved: Array<string>, };

export type ToolEntry = { 
/**
 * Sanitized, unique, at most 64 characters.
 */
name: string, server: string, 
/**
 * The tool's raw name on its server.
 */
tool: string, description?: string, 
/**
 * Shared with the server's own tool list (10,000 tools must not mean
 * 10,000 schemas copied on every re-index).
 */
inputSchema: JsonSchema, 
/**
 * From the tool cache; the server is still connecting.
 */
deferred: boolean, };

export type ToolIndex = { tools: Array<ToolEntry>, collisions: Array<Collision>, };

export type CallOutcome = { 
/**
 * Text content joined; `Error: …` when the server reported an error.
 */
text: string, isError: boolean, content: unknown[], structuredContent?: unknown, server: string, tool: string, source?: string, };

export type ServerError = { server: string, error: string, };

export type ReconcileReport = { started: Array<string>, stopped: Array<string>, updated: Array<string>, 
/**
 * Untouched: same definition, same connection, same process.
 */
kept: Array<string>, failed: Array<ServerError>, };

export type StartupReport = { connected: Array<string>, failed: Array<ServerError>, 
/**
 * Pending servers whose tools came from the cache.
 */
deferred: Array<string>, elapsedMs: number, };

export type LogLine = { 
/**
 * The line's number among every line this process logged, for all
 * servers: it only grows, and a server's lines are numbered in their
 * order. A line buffered before its batch is published can reach a
 * reader twice (in a snapshot and then in the event); the number says
 * which lines the reader already has.
 */
seq: number, 
/**
 * Milliseconds since the Unix epoch.
 */
at: number, 
/**
 * `stderr`, `lifecycle` or a server log level (`info`, `error`, …).
 */
kind: string, text: string, };

export type SignInPhase = { "state": "waiting", url: string, } | { "state": "signed-in" } | { "state": "signed-out" } | { "state": "failed", error: string, };

export type SignInStatus = { signedIn: boolean, 
/**
 * `Secret Service`, `macOS Keychain`, …
 */
store: string, 
/**
 * Why sign-in cannot work here (no keychain), if so.
 */
unavailable?: string, };

export type Account = { 
/**
 * The server (keychain record) the sign-in belongs to.
 */
server: string, 
/**
 * The URL it was made for.
 */
resource: string, 
/**
 * The authorization server that issued it.
 */
issuer: string | null, clientId: string, scopes: Array<string>, 
/**
 * Seconds since 1970.
 */
signedInAt: number | null, 
/**
 * When the current access token expires (seconds since 1970).
 */
expiresAt: number | null, hasRefreshToken: boolean, 
/**
 * The servers that use it (the server itself, stdio servers naming it
 * as `auth.credentialId`).
 */
usedBy: Array<string>, };

export type AccountList = { accounts: Array<Account>, 
/**
 * `Secret Service`, `macOS Keychain`, …
 */
store: string, 
/**
 * Why nothing can be kept there right now, if so.
 */
unavailable?: string, };

export type ClientSecretStatus = { stored: boolean, store: string, unavailable?: string, };

export type StepUp = { scopes: Array<string>, 
/**
 * The server's own words (`error_description`), if it gave any.
 */
reason: string | null, };

export type EngineEvent = { "type": "status", server: string, status: ServerStatus, } | { "type": "tools", server: string, count: number, deferred: boolean, } | { "type": "log", server: string, lines: Array<LogLine>, } | { "type": "warning", server: string, message: string, } | { "type": "removed", server: string, } | { "type": "resource-updated", server: string, uri: string, } | { "type": "resources-changed", server: string, } | { "type": "prompts-changed", server: string, } | { "type": "reconciled", report: ReconcileReport, } | { "type": "elicitation", id: number, server: string, message: string, schema: JsonSchema, } | { "type": "source-changed", source: string, path: string, } | { "type": "discovery-changed", servers: number, warnings: number, } | { "type": "sign-in", server: string, phase: SignInPhase, } | { "type": "approvals" };

export type Dropped = { "kind": "bundle", path: string, } | { "kind": "text", text: string, } | { "kind": "refused", message: string, };

export type AppEvent = { "type": "ready", report: StartupReport, } | { "type": "resync" } | { "type": "gateway", status: GatewayStatus, } | { "type": "profiles", active: string, } | { "type": "bundle-progress", progress: BundleProgress, } | { "type": "dropped", item: Dropped, } | { "type": "install-links" };

export type ResourceInfo = { uri: string, name: string, title?: string, description?: string, mimeType?: string, 
/**
 * Bytes, when the server says.
 */
size?: number, };

export type ResourceTemplateInfo = { uriTemplate: string, name: string, title?: string, description?: string, mimeType?: string, };

export type ResourceList = { resources: Array<ResourceInfo>, resourceTemplates: Array<ResourceTemplateInfo>, };

export type ResourceContent = { uri: string, mimeType?: string, text?: string, blob?: string, };

export type ResourceRead = { contents: Array<ResourceContent>, };

export type PromptArgumentInfo = { name: string, title?: string, description?: string, required?: boolean, };

export type PromptInfo = { name: string, title?: string, description?: string, arguments?: Array<PromptArgumentInfo>, };

export type PromptList = { prompts: Array<PromptInfo>, };

export type PromptMessageInfo = { role: string, content: { type: string; text?: string; mimeType?: string; [key: string]: unknown }, };

export type PromptResult = { description?: string, messages: Array<PromptMessageInfo>, };

export type ProbeReport = { message: string, toolCount: number, tools: Array<string>, };

export type EntryText = { format: Format, text: string, };

export type LineKind = "same" | "removed" | "added" | "skipped";

export type DiffLine = { kind: LineKind, text: string, old?: number, new?: number, };

export type FileChange = { path: string, 
/**
 * SHA-256 (hex) of the content before and after; none: no file.
 */
beforeHash?: string, afterHash?: string, 
/**
 * Changed lines with context; env, header and token values masked.
 */
diff: Array<DiffLine>, };

export type UndoState = "ready" | "changed" | "undone";

export type HistoryEntry = { id: number, 
/**
 * Milliseconds since the Unix epoch.
 */
at: number, 
/**
 * The server the action was about, if it was about one.
 */
server?: string, 
/**
 * `update "github" in Cursor (args)`.
 */
summary: string, 
/**
 * Set on an entry that undid another.
 */
undoOf?: number, files: Array<FileChange>, 
/**
 * Whether undo can apply now; worked out by `list`, not stored.
 */
state: UndoState, };

export type UndoReport = { 
/**
 * The entry undone.
 */
undone: number, summary: string, 
/**
 * The files given back their earlier content.
 */
restored: Array<string>, 
/**
 * The entry recording the undo itself (none if it could not be recorded).
 */
recordedAs?: number, };

export type HttpSupport = "headers" | "tokenEnvVar" | "none";

export type EntryState = { "kind": "absent" } | { "kind": "connected", transport: Transport, 
/**
 * The binary path (stdio) or URL (http).
 */
target: string, 
/**
 * Off in the client (disabled, or parked by Switchboard).
 */
enabled: boolean, } | { "kind": "foreign", runs: string, };

export type ClientConnection = { 
/**
 * The id commands take (`cursor`).
 */
client: string, label: string, 
/**
 * The source id of its user file (`cursor-user`).
 */
source: string, path: string, 
/**
 * Whether the file exists (connecting creates it).
 */
exists: boolean, entry: EntryState, http: HttpSupport, 
/**
 * Servers in this client's file that the gateway also serves: they
 * would run twice once the client uses the gateway.
 */
duplicates: Array<string>, 
/**
 * Servers connect disabled here; disconnect turns them back on.
 */
disabledByConnect: Array<string>, 
/**
 * Why the file cannot be read or written now, if so.
 */
problem?: string, };

export type EntryAction = "add" | "update" | "unchanged";

export type DuplicateServer = { name: string, 
/**
 * Its only enabled definition is in this client: it is copied into
 * Switchboard's own file first, so the gateway keeps serving it.
 */
copyToSwitchboard: boolean, };

export type KeptServer = { name: string, reason: string, };

export type ConnectPlan = { client: string, label: string, source: string, path: string, action: EntryAction, transport: Transport, 
/**
 * The entry as it will be written, in the client's format (as a
 * document of its own), with the token shown as `•••`.
 */
entryText: string, 
/**
 * Whether the file does not exist yet and will be created.
 */
createsFile: boolean, 
/**
 * The servers the gateway also serves (the choice to offer).
 */
duplicates: Array<string>, 
/**
 * What will be disabled: empty unless `disable_duplicates` was asked.
 */
disable: Array<DuplicateServer>, 
/**
 * Duplicates that stay on, and why (only with `disable_duplicates`).
 */
kept: Array<KeptServer>, 
/**
 * Things the user must know (e.g. Codex reads the token from a variable).
 */
notes: Array<string>, };

export type ConnectReport = { 
/**
 * The history entry (`switchboard undo ID`), if anything was written.
 */
historyId?: number, client: string, label: string, source: string, path: string, action: EntryAction, transport: Transport, 
/**
 * The entry as it will be written, in the client's format (as a
 * document of its own), with the token shown as `•••`.
 */
entryText: string, 
/**
 * Whether the file does not exist yet and will be created.
 */
createsFile: boolean, 
/**
 * The servers the gateway also serves (the choice to offer).
 */
duplicates: Array<string>, 
/**
 * What will be disabled: empty unless `disable_duplicates` was asked.
 */
disable: Array<DuplicateServer>, 
/**
 * Duplicates that stay on, and why (only with `disable_duplicates`).
 */
kept: Array<KeptServer>, 
/**
 * Things the user must know (e.g. Codex reads the token from a variable).
 */
notes: Array<string>, };

export type DisconnectReport = { client: string, label: string, path: string, removedEntry: boolean, 
/**
 * Servers turned back on in the client.
 */
reEnabled: Array<string>, 
/**
 * Copies removed from Switchboard's own file.
 */
removedCopies: Array<string>, 
/**
 * Things left as they are, and why (a server the user removed since,
 * a copy the user changed since).
 */
kept: Array<KeptServer>, 
/**
 * The file connect created was deleted (it held nothing else).
 */
removedFile: boolean, historyId?: number, };

export type SidecarCheck = { ok: boolean, 
/**
 * The binary a stdio entry runs.
 */
path: string, 
/**
 * From the handshake: the gateway's name and version.
 */
server: string | null, 
/**
 * Tools it listed (servers still starting may add more later).
 */
tools: number | null, 
/**
 * For people: what worked, or what failed and what to do.
 */
message: string, };

export type Connected = { report: ConnectReport, check: SidecarCheck | null, };

export type AppSettings = { 
/**
 * The desktop starts Switchboard (in the tray) when the user logs in:
 * read from the desktop's own autostart entry, which the user may also
 * remove outside Switchboard.
 */
startAtLogin: boolean, keepInTray: boolean, projectConfig: boolean, 
/**
 * Timeout, restart policy and health checks of servers that set none.
 */
serverDefaults: ServerDefaults, dataFolder: string, };

export type GatewayState = "starting" | "listening" | "off" | "failed";

export type GatewaySettings = { 
/**
 * `None` (or 0, which no client entry could name): [`DEFAULT_GATEWAY_PORT`].
 */
port?: number, 
/**
 * The app does not serve the gateway while it runs.
 */
off?: boolean, 
/**
 * Offer `search_tools` and `call_tool` instead of every tool.
 */
toolSearch?: boolean, };

export type ServerDefaults = { 
/**
 * Milliseconds a server has for its handshake and each request.
 */
timeoutMs: number, restartPolicy: RestartPolicy, 
/**
 * Milliseconds between two health checks (MCP `ping`) of a connected server.
 */
healthIntervalMs: number, };

export type GatewaySession = { id: number, client: string, version: string, 
/**
 * `None`: the aggregate; else the one server it is for.
 */
server: string | null, 
/**
 * The profile it was opened for (`/mcp/p/<profile>`, `serve --profile`).
 */
profile?: string, };

export type GatewayToolCalls = { server: string, tool: string, calls: number, 
/**
 * Calls that ended in an error (protocol error or `isError` result).
 */
errors: number, };

export type GatewayStatus = { state: GatewayState, 
/**
 * `http://127.0.0.1:PORT/mcp` while listening.
 */
url: string | null, settings: GatewaySettings, defaultPort: number, 
/**
 * Why the gateway is not listening, for people.
 */
message: string | null, 
/**
 * Clients connected now.
 */
sessions: Array<GatewaySession>, 
/**
 * Calls through the gateway since the app started, most called first.
 */
calls: Array<GatewayToolCalls>, 
/**
 * Tools a client of the aggregate sees now (switches applied).
 */
toolCount: number, 
/**
 * Those names longer than [`NAME_LIMIT`].
 */
longNames: Array<string>, 
/**
 * Limits of common clients that `tool_count` is above.
 */
overLimits: Array<number>, 
/**
 * Tools switched off, by server and raw tool name.
 */
disabledTools: { [key in string]: Array<string> }, 
/**
 * Servers left out of the gateway.
 */
excluded: Array<string>, };

export type ItemKind = "tool" | "prompt" | "resource-template";

export type PinState = "approved" | "new" | "changed";

export type Severity = "low" | "medium" | "high";

export type ApprovalMode = "hold-changed" | "warn" | "hold-new";

export type Finding = { rule: string, severity: Severity, 
/**
 * One sentence: what was found, where, and why it matters.
 */
message: string, 
/**
 * Where: `description`, `inputSchema.properties.path.description`,
 * `instructions`, or empty for a finding about the whole server.
 */
at?: string, 
/**
 * The text with its hidden characters made visible (tag characters
 * decoded to what they spell), when the finding is about hidden text.
 */
visible?: string, };

export type ItemChanges = { description: Array<DiffLine>, 
/**
 * The rest of the definition (schemas, annotations, title), as JSON.
 */
definition: Array<DiffLine>, };

export type ItemReview = { kind: ItemKind, name: string, pin: PinState, 
/**
 * Left out of the gateway until approved.
 */
held: boolean, findings: Array<Finding>, changes?: ItemChanges, };

export type RemovedItem = { kind: ItemKind, name: string, };

export type ServerReview = { server: string, mode: ApprovalMode, 
/**
 * Something was approved under this server's current identity.
 */
known: boolean, items: Array<ItemReview>, 
/**
 * Approved items it no longer offers.
 */
removed: Array<RemovedItem>, 
/**
 * About the server as a whole: its instructions, a burst of new
 * tools, approved tools gone.
 */
findings: Array<Finding>, };

export type TrustReport = { servers: Array<ServerReview>, problem?: string, };

export type ToolsApproved = { server: string, 
/**
 * `tool:NAME`, `prompt:NAME`, `resource-template:NAME`.
 */
approved: Array<string>, 
/**
 * Approved items the server no longer offers, forgotten.
 */
forgotten: Array<string>, };

export type ToolRule = { "allow": Array<string> } | { "deny": Array<string> };

export type ProfileChange = { "kind": "create", name: string, servers: Array<string>, } | { "kind": "delete", name: string, } | { "kind": "rename", name: string, newName: string, } | { "kind": "add", name: string, servers: Array<string>, } | { "kind": "remove", name: string, servers: Array<string>, } | { "kind": "setTool", name: string, server: string, tool: string, on: boolean, } | { "kind": "setRule", name: string, server: string, rule?: ToolRule, } | { "kind": "budget", client?: string, tokens: number, };

export type ToolCost = { 
/**
 * The gateway name (`mcp_<server>_<tool>`).
 */
name: string, server: string, 
/**
 * The raw name on its server.
 */
tool: string, 
/**
 * Tokens of its definition ([`TOKENIZER`]).
 */
tokens: number, };

export type ProfileServerView = { name: string, 
/**
 * No source defines a server of this name any more: the profile keeps
 * it (it comes back when the server does), and shows it as missing.
 */
missing: boolean, 
/**
 * Whether it runs now (`None`: not known to the manager).
 */
status?: ServerStatus, 
/**
 * Absent: every tool.
 */
rule?: ToolRule, 
/**
 * Its tools the profile lets through.
 */
tools: Array<ToolCost>, 
/**
 * Its tools the profile leaves out.
 */
leftOut: Array<ToolCost>, 
/**
 * Tokens of the tools let through.
 */
tokens: number, };

export type OverBudget = { budget: number, 
/**
 * Servers costing the most, largest first: (server, tokens).
 */
biggest: Array<[string, number]>, 
/**
 * Tokens of the gateway's tool-search pair (`search_tools`,
 * `call_tool`), offered instead of every tool.
 */
toolSearchTokens: number, };

export type ProfileView = { name: string, 
/**
 * The built-in profile (every server, every tool).
 */
builtIn: boolean, 
/**
 * What the switch is on (the gateway's `/mcp` serves it).
 */
active: boolean, servers: Array<ProfileServerView>, 
/**
 * Tokens of every tool definition it offers.
 */
tokens: number, tokenizer: string, 
/**
 * Client ids and project folders that follow it.
 */
usedBy: Array<string>, 
/**
 * Over the smallest budget of the clients using it (or the default
 * budget): the biggest contributors, and what tool search would cost.
 */
overBudget?: OverBudget, };

export type Via = "file" | "gateway";

export type ApplyReport = { 
/**
 * The client's id (`cursor`).
 */
client: string, label: string, 
/**
 * The profile applied (its own spelling), or `Everything`.
 */
profile: string, via: Via, 
/**
 * The source id of the file (`cursor-user`, `cursor-project@/dir`).
 */
source: string, path: string, 
/**
 * Servers turned on (in the client's own way, or brought back from
 * where Switchboard parked them).
 */
enabled: Array<string>, 
/**
 * Servers turned off (or parked).
 */
disabled: Array<string>, 
/**
 * Servers the file did not define, added with their winning definition.
 */
added: Array<string>, 
/**
 * Servers a profile had added, taken out again.
 */
removed: Array<string>, 
/**
 * What the user should know (servers left out and why, an entry the
 * gateway also serves, …).
 */
notes: Array<string>, 
/**
 * The client reads its file only when it starts: what to do for the
 * change to count (set only when the file changed).
 */
restartHint?: string, 
/**
 * The history entry (`switchboard undo ID`), if anything was written.
 */
historyId?: number, };

export type ClientCost = { 
/**
 * The client's id (`cursor`).
 */
client: string, label: string, 
/**
 * The profile it follows, if any.
 */
profile?: string, via?: Via, 
/**
 * (server, tokens), in the order its files list them; the gateway
 * entry counts as the profile it serves.
 */
servers: Array<[string, number]>, tokens: number, tokenizer: string, budget: number, overBudget?: OverBudget, };

export type ProfileServer = { 
/**
 * The server's name (its winning definition is used).
 */
name: string, 
/**
 * Absent: every tool of the server.
 */
tools?: ToolRule, };

export type SecretRef = { server: string, 
/**
 * `env.GITHUB_TOKEN`, `headers.Authorization`, `args[3]`, `url`,
 * `oauth.clientSecret`.
 */
field: string, 
/**
 * What the definition holds instead of the value (`${keychain:NAME}`,
 * `${VAR}`); absent for an OAuth app's client secret, which is kept in
 * the keychain beside the sign-in and never in a file.
 */
reference?: string, };

export type SecretKind = "keychain" | "variable" | "oauthAppSecret";

export type ImportOptions = { 
/**
 * The name of the profile made here (default: the document's).
 */
asName?: string, 
/**
 * Write the document's definition of a server defined here
 * differently into Switchboard's own file.
 */
replace: boolean, };

export type ServerAction = "add" | "reuse" | "replace" | "conflict";

export type ServerPlan = { name: string, action: ServerAction, 
/**
 * Where the server is defined here now (client and file).
 */
existing?: string, 
/**
 * Something to know about it (a definition that still wins over it).
 */
note?: string, 
/**
 * The definition the document gives.
 */
def: ServerDef, };

export type MissingRuntime = { server: string, program: string, 
/**
 * What it comes with (`Node.js`), when known.
 */
runtime?: string, 
/**
 * How to install it on this system.
 */
install: string, };

export type SecretToEnter = { server: string, field: string, reference?: string, kind: SecretKind, 
/**
 * What to give its value as (`NAME=VALUE`): the keychain name, the
 * variable, or `SERVER.oauth.clientSecret`.
 */
name: string, 
/**
 * A variable already set in this process's environment.
 */
set: boolean, };

export type ImportPreview = { 
/**
 * The profile it makes; absent for an export of Everything imported
 * without a name (its servers join Everything here).
 */
profile?: string, 
/**
 * The same profile (servers and tool rules) is here already.
 */
profileExists: boolean, 
/**
 * The profile's servers with their tool rules, in its order.
 */
profileServers: Array<ProfileServer>, 
/**
 * Switchboard's own file, where the servers go.
 */
file: string, servers: Array<ServerPlan>, 
/**
 * Servers defined here differently (written only with `replace`).
 */
conflicts: Array<string>, missingRuntimes: Array<MissingRuntime>, secrets: Array<SecretToEnter>, 
/**
 * Whether importing would write anything.
 */
writes: boolean, };

export type ImportReport = { preview: ImportPreview, 
/**
 * The history entry of the writes (undo it to take the import back).
 */
historyId?: number, 
/**
 * Secrets entered and kept in the keychain, by name.
 */
kept: Array<string>, 
/**
 * Secrets still to enter.
 */
toEnter: Array<SecretToEnter>, };

export type ProfileSource = { "kind": "file", path: string, } | { "kind": "text", text: string, };

export type Exported = { profile: string, path: string, servers: Array<string>, 
/**
 * What whoever imports it enters (the file holds references only).
 */
secrets: Array<SecretRef>, };

export type RegistryOffline = { 
/**
 * Milliseconds since 1970 (UTC).
 */
fetchedAtMs: number, reason: string, };

export type CallVia = "http" | "stdio" | "app";

export type Kind = "tool" | "resource" | "prompt";

export type Outcome = "ok" | "toolError" | "protocolError" | "timeout";

export type Entry = { 
/**
 * Given by the journal when written (0 before); grows with each entry.
 */
id: number, 
/**
 * When the call started, in ms since the Unix epoch.
 */
time: number, via: CallVia, 
/**
 * The client's name and version from its `initialize` (for a request
 * without a session: from its `_meta` or `User-Agent`).
 */
client: string, clientVersion: string | null, 
/**
 * The signed-in person (the team gateway), when there is one.
 */
user: string | null, 
/**
 * The profile whose gateway served the call.
 */
profile: string | null, server: string, kind: Kind, 
/**
 * The tool's name, the resource's URI or the prompt's name.
 */
name: string, arguments: string, argumentsCut: boolean, argumentsBytes: number, 
/**
 * The start of the result (or resource contents, or prompt messages).
 */
result: string, resultCut: boolean, resultBytes: number, durationUs: number, outcome: Outcome, 
/**
 * The doctor's class of the failure (`auth`, `timeout`, …).
 */
errorClass: string | null, error: string | null, 
/**
 * What the checks on results found.
 */
findings: Array<Finding>, };

export type Filter = { 
/**
 * The client's name as its `initialize` gave it.
 */
client: string | null, server: string | null, 
/**
 * The tool's name, resource URI or prompt name (exactly).
 */
name: string | null, kind: Kind | null, 
/**
 * Only these outcomes (empty: any).
 */
outcomes: Array<Outcome>, 
/**
 * Only calls that did not end `ok`.
 */
errors: boolean, 
/**
 * Only calls with a finding.
 */
findings: boolean, 
/**
 * From this time on (ms since the epoch, inclusive).
 */
since: number | null, 
/**
 * Before this time (ms, exclusive).
 */
until: number | null, 
/**
 * Text in the name, arguments, result or error (case-insensitive for ASCII).
 */
search: string | null, 
/**
 * Paging newest first: entries older than this id (the previous
 * page's `nextBeforeId`).
 */
beforeId: number | null, 
/**
 * Following: entries newer than this id, oldest first.
 */
afterId: number | null, 
/**
 * Entries per page ([`DEFAULT_PAGE`] when absent, at most [`MAX_PAGE`]).
 */
limit: number | null, };

export type Page = { entries: Array<Entry>, 
/**
 * The `beforeId` of the next (older) page, when there may be one.
 */
nextBeforeId: number | null, };

export type ServerSeries = { server: string, 
/**
 * Calls per bucket, `buckets` long.
 */
calls: Array<number>, 
/**
 * Calls that did not end `ok`, per bucket.
 */
errors: Array<number>, };

export type Latency = { server: string, 
/**
 * The tool (resource, prompt); absent for a server's figures.
 */
name: string | null, calls: number, errors: number, p50Us: number, p90Us: number, p99Us: number, maxUs: number, };

export type Aggregates = { 
/**
 * The first bucket's start (ms); bucket `i` starts at `start + i × bucketMs`.
 */
start: number, bucketMs: number, buckets: number, calls: number, errors: number, 
/**
 * Per server, busiest first.
 */
series: Array<ServerSeries>, 
/**
 * Per server, busiest first.
 */
servers: Array<Latency>, 
/**
 * Per tool, busiest first.
 */
tools: Array<Latency>, 
/**
 * The [`BUSIEST`] tools with the most calls.
 */
busiest: Array<Latency>, };

export type Stats = { 
/**
 * Entries written since this journal was opened.
 */
written: number, 
/**
 * Entries dropped: the queue was full, or the file was locked or
 * could not be written.
 */
dropped: number, 
/**
 * Entries waiting in the queue.
 */
queued: number, 
/**
 * The last problem (a damaged file set aside, a lock, a full disk).
 */
problem: string | null, };

export type ExportFormat = "jsonl" | "csv";

export type ActivityExport = { path: string, 
/**
 * Calls written.
 */
calls: number, };

export type JournalSettings = { 
/**
 * Entries older than this many days are removed.
 */
keepDays: number, 
/**
 * The journal is kept under this many megabytes (oldest removed first).
 */
keepMb: number, };

export type JournalStatus = { limits: JournalSettings, path: string, 
/**
 * `None`: the journal is not open (calls are not recorded).
 */
stats: Stats | null, 
/**
 * Calls in the file (`None`: it could not be read).
 */
entries: number | null, 
/**
 * The file with its write-ahead log, in bytes.
 */
bytes: number, };

export type TelemetrySettings = { enabled: boolean, 
/**
 * The collector's OTLP/HTTP traces URL.
 */
endpoint: string, 
/**
 * Also send each call's arguments and result (masked, capped).
 */
includePayloads: boolean, };

export type TelemetryStats = { 
/**
 * Spans are being exported (turned on, and the endpoint is usable).
 */
exporting: boolean, 
/**
 * Spans the collector accepted since this journal was opened.
 */
exported: number, 
/**
 * Spans in requests that failed (no collector, a refusal, a timeout).
 */
failed: number, 
/**
 * The last problem: a bad endpoint, or why the last request failed.
 */
problem: string | null, };

export type TelemetryStatus = { settings: TelemetrySettings, 
/**
 * `None`: the journal is not open (no call is recorded or exported).
 */
stats: TelemetryStats | null, };

export type ResultMode = "log" | "warn" | "block";

export type CatalogEntry = { 
/**
 * The registry name (`io.github.user/weather`).
 */
name: string, title: string | null, description: string, version: string, 
/**
 * `active` or `deprecated` (deleted servers are not listed).
 */
status: string, statusMessage: string | null, 
/**
 * `npm`, `pypi`, `oci`, `nuget`, `mcpb`, in the order published.
 */
packageKinds: Array<string>, 
/**
 * It can run on this computer (has a package).
 */
local: boolean, 
/**
 * It can be reached as a hosted server (has a remote).
 */
remote: boolean, repositoryUrl: string | null, websiteUrl: string | null, };

export type CatalogPage = { servers: Array<CatalogEntry>, nextCursor: string | null, 
/**
 * Set when the registry could not be reached: these results are the
 * ones cached at `fetchedAtMs`.
 */
offline: RegistryOffline | null, 
/**
 * The registry asked.
 */
registryUrl: string, };

export type CatalogVersion = { version: string, status: string, publishedAt: string | null, isLatest: boolean, };

export type InstallChoice = { "kind": "package", index: number, } | { "kind": "remote", index: number, };

export type InstallFieldGroup = "env" | "header" | "argument" | "url";

export type InstallField = { id: string, 
/**
 * What the user calls it: the variable, header, flag, hint or `{VAR}` name.
 */
key: string, group: InstallFieldGroup, 
/**
 * The env/header/argument it is a `{variable}` of, if it is one.
 */
variableOf?: string, description?: string, required: boolean, secret: boolean, 
/**
 * `string`, `number`, `boolean` or `filepath`.
 */
format: string, default?: string, placeholder?: string, choices?: Array<string>, 
/**
 * Several values (one per line).
 */
repeated: boolean, };

export type InstallForm = { choice: InstallChoice, 
/**
 * `npm @scope/pkg 1.2.3`, `streamable-http https://…`.
 */
label: string, 
/**
 * The program the definition runs (`npx`, `uvx`, `docker`, `dnx`); `None` for remotes.
 */
runtime?: string, 
/**
 * Why this one cannot be installed (then there is no definition).
 */
notInstallable?: string, 
/**
 * The name the server gets unless the user picks another.
 */
suggestedName: string, fields: Array<InstallField>, };

export type CatalogServer = { entry: CatalogEntry, versions: Array<CatalogVersion>, forms: Array<InstallForm>, 
/**
 * The server.json itself, sent back with `install_server`.
 */
server: unknown, offline: RegistryOffline | null, };

export type RuntimeCheck = { program: string, 
/**
 * Where it was found (the app's PATH, then the login shell's).
 */
found?: string, 
/**
 * What to install to get it (set when not found).
 */
installHint?: string, };

export type InstallReport = { name: string, source: string, path: string, 
/**
 * Keychain names of the secrets kept (`weather.API_KEY`).
 */
keptInKeychain: Array<string>, 
/**
 * Secret values were written into the target file as given (a client's file).
 */
plainTextSecrets: boolean, replaced: boolean, };

export type LinkKind = "vscode" | "vscodeInsiders" | "cursor" | "lmStudio" | "switchboard" | "snippet";

export type SnippetShape = "singleEntry" | "namedEntries" | "mcpServers" | "vscodeServers" | "zedContextServers" | "codexMcpServers" | "gooseExtensions";

export type LinkOrigin = { kind: LinkKind, 
/**
 * Reached through a web page's address (`https://cursor.com/…`, `vscode.dev/redirect…`).
 */
web: boolean, 
/**
 * Opened through `switchboard://import?url=…`.
 */
imported: boolean, shape?: SnippetShape, };

export type LinkInputKind = "declared" | "undeclared" | "placeholder";

export type LinkInput = { 
/**
 * The input's id (`apiKey`), or `FIELD:TOKEN` for a placeholder.
 */
id: string, 
/**
 * The exact text in the definition the value replaces (`${input:apiKey}`, `<YOUR_TOKEN>`).
 */
token: string, description?: string, 
/**
 * A secret: a password field, kept in the keychain.
 */
password: boolean, default?: string, 
/**
 * A `pickString` input's choices.
 */
options: Array<string>, kind: LinkInputKind, };

export type InlineSecret = { field: string, key: string, };

export type LinkWarningKind = "tempPath" | "shellSyntax" | "shellCommand" | "inlineSecret" | "ignored" | "renamed" | "input" | "entry";

export type LinkWarning = { 
/**
 * The server it is about, as the link names it.
 */
server?: string, 
/**
 * `command`, `args[2]`, `env.API_KEY`, `headers.Authorization`, `url`, `name`, `inputs`.
 */
field?: string, kind: LinkWarningKind, message: string, };

export type LinkServer = { 
/**
 * The name as the link gives it (it may hold spaces); `None`: the
 * caller asks for one.
 */
name?: string, 
/**
 * The definition, raw (`${input:…}` and placeholders as written).
 * `def.name` is `name` made valid ([`valid_name`]), empty when `name`
 * is `None`.
 */
def: ServerDef, inputs: Array<LinkInput>, inlineSecrets: Array<InlineSecret>, };

export type RegistryRef = { name: string, version?: string, };

export type LinkInstall = { origin: LinkOrigin, 
/**
 * Empty when `registry` is set.
 */
servers: Array<LinkServer>, registry?: RegistryRef, warnings: Array<LinkWarning>, };

export type LinkInstalled = { report: InstallReport, 
/**
 * The definition as written, password values given as text masked (`••••`).
 */
def: ServerDef, };

export type SignatureStatus = { "status": "unsigned" } | { "status": "self_signed", subject: string, fingerprint: string, } | { "status": "signed", subject: string, issuer: string, fingerprint: string, trusted: boolean, untrusted?: string, } | { "status": "invalid", reason: string, };

export type ConfigType = "string" | "number" | "boolean" | "file" | "directory";

export type BundleField = { key: string, kind: ConfigType, title: string, description: string, required: boolean, 
/**
 * The default, `${HOME}`-style variables resolved (several for `multiple`).
 */
defaults: Array<string>, 
/**
 * Kept in the keychain (Switchboard's own file) and never shown.
 */
sensitive: boolean, multiple: boolean, min?: number, max?: number, };

export type InstalledCopy = { server: string, 
/**
 * Source id.
 */
source: string, version: string, 
/**
 * Its settings as they are now, by key (sensitive ones are not given).
 */
values: Record<string, string[]>, 
/**
 * Settings with a value kept as it is when the field is left empty
 * (sensitive ones: in the keychain or in the client's file).
 */
kept: Array<string>, };

export type BundleView = { 
/**
 * Names this opened bundle in preview, install, cancel and progress.
 */
id: number, file: string, name: string, displayName?: string, version: string, description: string, author?: string, signature: SignatureStatus, 
/**
 * The signature in a sentence (`signed by X (trusted)`, `unsigned`).
 */
signatureText: string, compatible: boolean, 
/**
 * Why it may not run here (platform, runtimes).
 */
problems: Array<string>, 
/**
 * Runtimes found (`node 22.3.0`).
 */
found: Array<string>, fields: Array<BundleField>, files: number, unpackedSize: number, 
/**
 * Where it will be unpacked.
 */
unpackDir: string, installed: Array<InstalledCopy>, };

export type UnpackState = "unpacking" | "ready" | "failed";

export type BundleProgress = { id: number, done: number, total: number, state: UnpackState, error?: string, };

export type BundlePreview = { def: ServerDef, report: InstallReport, unpackDir: string, 
/**
 * Required settings without a value yet: shown as `<KEY>` in `def`.
 */
missing: Array<string>, };

export type CleanedUp = { removedDir?: string, removedSecrets: Array<string>, 
/**
 * What could not be removed, each in a sentence saying what to do.
 */
problems: Array<string>, };

export type BundleInstalled = { report: InstallReport, 
/**
 * The definition as written, secret values given as text masked.
 */
def: ServerDef, dir: string, 
/**
 * An update: the older version's folder and secrets no longer used.
 */
cleaned: CleanedUp, };

export type BundleOrigin = { name: string, displayName?: string, version: string, dir: string, };

export type RegistrySettings = { 
/**
 * The URL in use.
 */
url: string, 
/**
 * The one saved in Settings, if any.
 */
saved: string | null, 
/**
 * Set when `SWITCHBOARD_REGISTRY_URL` overrides Settings.
 */
fromEnv: string | null, defaultUrl: string, };

export type AppInfo = { name: string, version: string, };

export type ErrorCode = "invalid" | "io" | "not-found" | "already-exists" | "name-taken" | "conflict" | "unparsable" | "read-only" | "unsupported" | "damaged" | "already-undone" | "unknown-source" | "unknown-client" | "no-http" | "not-connected" | "connect-failed" | "mcp" | "disabled" | "aborted" | "keychain" | "no-keychain" | "no-sidecar" | "sidecar-failed" | "refused" | "invalid-port" | "offline" | "registry" | "missing-values" | "oauth-timeout" | "oauth-failed" | "oauth-cancelled" | "oauth-no-endpoints" | "oauth-no-registration" | "oauth-not-remote" | "oauth-port-taken" | "oauth-bad-redirect" | "oauth-refused-link";

export type CommandErrorPayload = { 
/**
 * Stable, machine-readable: the UI may branch on it (`ErrorCode.NotFound`).
 */
code: ErrorCode, 
/**
 * For people: names the file, server and field involved.
 */
message: string, };

/** Every `ErrorCode` by its Rust name. */
export const ErrorCode = {
  Invalid: 'invalid',
  Io: 'io',
  NotFound: 'not-found',
  AlreadyExists: 'already-exists',
  NameTaken: 'name-taken',
  Conflict: 'conflict',
  Unparsable: 'unparsable',
  ReadOnly: 'read-only',
  Unsupported: 'unsupported',
  Damaged: 'damaged',
  AlreadyUndone: 'already-undone',
  UnknownSource: 'unknown-source',
  UnknownClient: 'unknown-client',
  NoHttp: 'no-http',
  NotConnected: 'not-connected',
  ConnectFailed: 'connect-failed',
  Mcp: 'mcp',
  Disabled: 'disabled',
  Aborted: 'aborted',
  Keychain: 'keychain',
  NoKeychain: 'no-keychain',
  NoSidecar: 'no-sidecar',
  SidecarFailed: 'sidecar-failed',
  Refused: 'refused',
  InvalidPort: 'invalid-port',
  Offline: 'offline',
  Registry: 'registry',
  MissingValues: 'missing-values',
  OauthTimeout: 'oauth-timeout',
  OauthFailed: 'oauth-failed',
  OauthCancelled: 'oauth-cancelled',
  OauthNoEndpoints: 'oauth-no-endpoints',
  OauthNoRegistration: 'oauth-no-registration',
  OauthNotRemote: 'oauth-not-remote',
  OauthPortTaken: 'oauth-port-taken',
  OauthBadRedirect: 'oauth-bad-redirect',
  OauthRefusedLink: 'oauth-refused-link',
} as const;
