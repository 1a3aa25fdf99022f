// Generated from src-tauri/src/types.rs by `cargo test -p switchboard-app types`.
// Do not edit: change the Rust side and run that test with UPDATE_TYPES=1.

/** A JSON Schema object (tool input, elicitation request). */
export type JsonSchema = { [key: string]: unknown };

export type Transport = "stdio" | "http" | "sse";

export type Level = "user" | "project" | "managed";

export type Format = "json" | "jsonc" | "toml" | "yaml";

export type Client = "switchboard" | "claude-desktop" | "claude-code" | "cursor" | "vscode" | "windsurf" | "zed" | "cline" | "roo" | "gemini" | "codex" | "goose" | "lmstudio" | "continue" | "fallback";

export type AuthConfig = { type: string, credentialId?: string, };

export type OAuthApp = { clientId?: string, callbackPort?: number, scopes?: Array<string>, redirectUri?: string, clientSecret?: string, };

export type RestartPolicy = { initialDelayMs: number, maxDelayMs: number, backoffMultiplier: number, maxRestartAttempts: number, };

export type ServerDef = { name: string, transport: Transport, command?: string, args?: Array<string>, env?: Record<string, string>, cwd?: string, url?: string, headers?: Record<string, string>, enabled: boolean, 
/**
 * Milliseconds.
 */
timeout?: number, auth?: AuthConfig, oauth?: OAuthApp, restartPolicy?: RestartPolicy, autoApprove?: Array<string>, };

export type ServerStatus = { "state": "connecting" } | { "state": "connected" } | { "state": "disabled" } | { "state": "failed", error: string, } | { "state": "needs-auth", message: string, } | { "state": "restarting", attempt: number, of: number, } | { "state": "disconnected" };

export type ServerState = { name: string, status: ServerStatus, transport: Transport, source?: string, toolCount: number, deferred: boolean, pid?: number, binary?: string, transportUsed?: string, protocolVersion?: string, warnings: Array<string>, lastError?: string, 
/**
 * Why it is not running, in plain words with what to do.
 */
diagnosis?: Diagnosis, restarts: number, };

export type FailureClass = "command-not-found" | "not-executable" | "exited-at-once" | "missing-value" | "bad-folder" | "handshake-timeout" | "not-mcp" | "connection-refused" | "host-not-found" | "tls" | "wrong-url" | "unauthorized" | "protocol-mismatch" | "invalid-config" | "crashed" | "other";

export type CopyPlan = { to: string, client: string, path: string, createsFile: boolean, 
/**
 * The entry as it will appear in the target file.
 */
entry?: string, 
/**
 * Why it cannot be written there.
 */
refusal?: string, nameTaken: boolean, restartHint?: string, };

export type Diagnosis = { class: FailureClass, summary: string, detail: string, error: string, };

export type ShadowedDef = { source: string, path: string, line?: number, transport: Transport, enabled: boolean, errors?: Array<string>, };

export type TrustChange = { field: string, before?: string, after?: string, };

export type Held = { "kind": "not-approved", reason: string, } | { "kind": "changed", reason: string, changes: Array<TrustChange>, };

export type ServerView = { source: string, path: string, line?: number, errors: Array<string>, warnings: Array<string>, notRunnable?: string, parked?: boolean, 
/**
 * Its file does not parse right now: this is the last good version,
 * saved at this time (ms since the epoch).
 */
lastGoodAt?: number, 
/**
 * Not started until the user approves it.
 */
held?: Held, shadowed: Array<ShadowedDef>, runtime?: ServerState, name: string, transport: Transport, command?: string, args?: Array<string>, env?: Record<string, string>, cwd?: string, url?: string, headers?: Record<string, string>, enabled: boolean, 
/**
 * Milliseconds.
 */
timeout?: number, auth?: AuthConfig, oauth?: OAuthApp, restartPolicy?: RestartPolicy, autoApprove?: Array<string>, };

export type ParseError = { 
/**
 * Starts with the file (and line).
 */
message: string, line?: number, column?: number, 
/**
 * When the last good version still used was saved (ms since the
 * epoch); absent: there is none, so none of the file's servers run.
 */
lastGoodAt?: number, };

export type SourceInfo = { id: string, client: Client, clientName: string, level: Level, path: string, format: Format, exists: boolean, readOnly: boolean, priority: number, project?: string, serverCount: number, warnings: Array<string>, contentHash?: string, 
/**
 * Its client reads the file only at start: what to do after a change.
 */
restartHint?: string, 
/**
 * The `ServerDef` fields (camelCase) this source's client can store.
 */
fields: Array<string>, 
/**
 * Set while the file exists but does not parse.
 */
parseError?: ParseError, };

export type Approved = { servers: Array<string>, 
/**
 * Also approved for Claude Code (in `~/.claude.json`).
 */
forClaudeCode: Array<string>, };

export type ProjectFolder = { path: string, trusted: boolean, };

export type ToolRef = { server: string, tool: string, };

export type Collision = { name: string, tools: Array<ToolRef>, resolved: Array<string>, };

export type ToolEntry = { 
/**
 * Sanitized, unique: what clients see.
 */
name: string, server: string, 
/**
 * The tool's raw name on its server.
 */
tool: string, description?: string, inputSchema: JsonSchema, deferred: boolean, };

export type ToolIndex = { tools: Array<ToolEntry>, collisions: Array<Collision>, };

export type CallOutcome = { text: string, isError: boolean, content: unknown[], structuredContent?: unknown, server: string, tool: string, source?: string, };

export type ServerError = { server: string, error: string, };

export type ReconcileReport = { started: Array<string>, stopped: Array<string>, updated: Array<string>, kept: Array<string>, failed: Array<ServerError>, };

export type StartupReport = { connected: Array<string>, failed: Array<ServerError>, deferred: Array<string>, elapsedMs: number, };

export type LogLine = { 
/**
 * Milliseconds since the Unix epoch.
 */
at: number, 
/**
 * `stderr`, `lifecycle` or a server log level.
 */
kind: string, text: string, };

export type SignInPhase = { "state": "waiting", url: string, } | { "state": "signed-in" } | { "state": "signed-out" } | { "state": "failed", error: string, };

export type SignInStatus = { signedIn: boolean, store: string, unavailable?: string, };

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
 * When the access token expires (seconds since 1970).
 */
expiresAt: number | null, hasRefreshToken: boolean, 
/**
 * The servers that use it.
 */
usedBy: Array<string>, };

export type AccountList = { accounts: Array<Account>, store: string, unavailable?: string, };

export type ClientSecretStatus = { stored: boolean, store: string, unavailable?: string, };

export type StepUp = { scopes: Array<string>, reason: string | null, };

export type EngineEvent = { "type": "status", server: string, status: ServerStatus, } | { "type": "tools", server: string, count: number, deferred: boolean, } | { "type": "log", server: string, lines: Array<LogLine>, } | { "type": "warning", server: string, message: string, } | { "type": "removed", server: string, } | { "type": "resource-updated", server: string, uri: string, } | { "type": "resources-changed", server: string, } | { "type": "prompts-changed", server: string, } | { "type": "reconciled", report: ReconcileReport, } | { "type": "elicitation", id: number, server: string, message: string, schema: JsonSchema, } | { "type": "source-changed", source: string, path: string, } | { "type": "discovery-changed", servers: number, warnings: number, } | { "type": "sign-in", server: string, phase: SignInPhase, } | { "type": "ready", report: StartupReport, } | { "type": "resync" } | { "type": "gateway", status: GatewayStatus, } | { "type": "approvals" };

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

export type FileChange = { path: string, beforeHash?: string, afterHash?: string, 
/**
 * Env, header and token values are masked (`•••`).
 */
diff: Array<DiffLine>, };

export type UndoState = "ready" | "changed" | "undone";

export type HistoryEntry = { id: number, 
/**
 * Milliseconds since the Unix epoch.
 */
at: number, server?: string, summary: string, undoOf?: number, files: Array<FileChange>, state: UndoState, };

export type UndoReport = { undone: number, summary: string, restored: Array<string>, recordedAs?: number, };

export type HttpSupport = "headers" | "tokenEnvVar" | "none";

export type EntryState = { "kind": "absent" } | { "kind": "connected", transport: Transport, target: string, enabled: boolean, } | { "kind": "foreign", runs: string, };

export type ClientConnection = { client: string, label: string, source: string, path: string, exists: boolean, entry: EntryState, http: HttpSupport, duplicates: Array<string>, disabledByConnect: Array<string>, problem?: string, };

export type EntryAction = "add" | "update" | "unchanged";

export type DuplicateServer = { name: string, copyToSwitchboard: boolean, };

export type KeptServer = { name: string, reason: string, };

export type ConnectPlan = { client: string, label: string, source: string, path: string, action: EntryAction, transport: Transport, entryText: string, createsFile: boolean, duplicates: Array<string>, disable: Array<DuplicateServer>, kept: Array<KeptServer>, notes: Array<string>, };

export type ConnectReport = { historyId?: number, client: string, label: string, source: string, path: string, action: EntryAction, transport: Transport, entryText: string, createsFile: boolean, duplicates: Array<string>, disable: Array<DuplicateServer>, kept: Array<KeptServer>, notes: Array<string>, };

export type DisconnectReport = { client: string, label: string, path: string, removedEntry: boolean, reEnabled: Array<string>, removedCopies: Array<string>, kept: Array<KeptServer>, removedFile: boolean, historyId?: number, };

export type SidecarCheck = { ok: boolean, path: string, server: string | null, tools: number | null, message: string, };

export type Connected = { report: ConnectReport, check: SidecarCheck | null, };

export type AppSettings = { startAtLogin: boolean, keepInTray: boolean, projectConfig: boolean, dataFolder: string, };

export type GatewayState = "starting" | "listening" | "off" | "failed";

export type GatewaySettings = { port?: number, off?: boolean, toolSearch?: boolean, };

export type GatewaySession = { id: number, client: string, version: string, 
/**
 * `null`: every server; else the one server it is for.
 */
server: string | null, };

export type GatewayToolCalls = { server: string, tool: string, calls: number, errors: number, };

export type GatewayStatus = { state: GatewayState, url: string | null, settings: GatewaySettings, defaultPort: number, message: string | null, sessions: Array<GatewaySession>, calls: Array<GatewayToolCalls>, toolCount: number, longNames: Array<string>, overLimits: Array<number>, disabledTools: { [key in string]: Array<string> }, excluded: Array<string>, };

export type ItemKind = "tool" | "prompt" | "resource-template";

export type PinState = "approved" | "new" | "changed";

export type Severity = "low" | "medium" | "high";

export type ApprovalMode = "hold-changed" | "warn" | "hold-new";

export type Finding = { rule: string, severity: Severity, message: string, 
/**
 * Where: `description`, a schema path, `instructions`; absent: the whole server.
 */
at?: string, 
/**
 * The text with hidden characters made visible (tag characters decoded).
 */
visible?: string, };

export type ItemChanges = { description: Array<DiffLine>, definition: Array<DiffLine>, };

export type ItemReview = { kind: ItemKind, name: string, pin: PinState, 
/**
 * Left out of the gateway until approved.
 */
held: boolean, findings: Array<Finding>, changes?: ItemChanges, };

export type RemovedItem = { kind: ItemKind, name: string, };

export type ServerReview = { server: string, mode: ApprovalMode, 
/**
 * Something was approved under this server's current command/URL.
 */
known: boolean, items: Array<ItemReview>, removed: Array<RemovedItem>, findings: Array<Finding>, };

export type TrustReport = { servers: Array<ServerReview>, problem?: string, };

export type ToolsApproved = { server: string, approved: Array<string>, forgotten: Array<string>, };

export type RegistryOffline = { fetchedAtMs: number, reason: string, };

export type CatalogEntry = { name: string, title: string | null, description: string, version: string, status: string, statusMessage: string | null, packageKinds: Array<string>, local: boolean, remote: boolean, repositoryUrl: string | null, websiteUrl: string | null, };

export type CatalogPage = { servers: Array<CatalogEntry>, nextCursor: string | null, offline: RegistryOffline | null, registryUrl: string, };

export type CatalogVersion = { version: string, status: string, publishedAt: string | null, isLatest: boolean, };

export type InstallChoice = { "kind": "package", index: number, } | { "kind": "remote", index: number, };

export type InstallFieldGroup = "env" | "header" | "argument" | "url";

export type InstallField = { id: string, key: string, group: InstallFieldGroup, variableOf?: string, description?: string, required: boolean, secret: boolean, format: string, default?: string, placeholder?: string, choices?: Array<string>, repeated: boolean, };

export type InstallForm = { choice: InstallChoice, label: string, runtime?: string, notInstallable?: string, suggestedName: string, fields: Array<InstallField>, };

export type CatalogServer = { entry: CatalogEntry, versions: Array<CatalogVersion>, forms: Array<InstallForm>, 
/**
 * The server.json, sent back unchanged with `install_server`.
 */
server: unknown, offline: RegistryOffline | null, };

export type RuntimeCheck = { program: string, found?: string, installHint?: string, };

export type InstallReport = { name: string, source: string, path: string, keptInKeychain: Array<string>, plainTextSecrets: boolean, replaced: boolean, };

export type RegistrySettings = { url: string, saved: string | null, fromEnv: string | null, defaultUrl: string, };

export type AppInfo = { name: string, version: string, };

export type CommandErrorPayload = { code: string, message: string, };
