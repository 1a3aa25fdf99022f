//! `switchboard`: the headless front end of the engine. Every
//! command is a thin call into the engine's public API, which the app uses too.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use switchboard_engine::config::{ServerDef, Transport};
use switchboard_engine::discovery::{discover, ordered_sources, DiscoverOptions, Discovery};
use switchboard_engine::host::Host;
use switchboard_engine::settings::{put_first, Settings};
use switchboard_engine::sources::SourceSpec;
use switchboard_engine::writer::edit::{EditError, ServerEdit, Writer};
use switchboard_engine::writer::history::History;

#[derive(Parser)]
#[command(
    name = "switchboard",
    version,
    about = "Find, explain and edit every MCP server configured on this machine"
)]
struct Cli {
    /// Treat DIR as a trusted project folder for this run (repeatable).
    #[arg(long = "project", value_name = "DIR", global = true)]
    projects: Vec<PathBuf>,
    /// Answer servers' elicitation requests with the schema's defaults
    /// (otherwise they are declined: there is no one to ask).
    #[arg(long, global = true)]
    accept_defaults: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// List every source and every server, with winners and shadowed definitions.
    Discover {
        #[arg(long)]
        json: bool,
    },
    /// Add a server: `switchboard add NAME -- COMMAND ARGS...` or `--url URL`.
    Add {
        name: String,
        /// Source id to write to (default: Switchboard's own file).
        #[arg(long, default_value = "switchboard")]
        source: String,
        #[arg(long)]
        url: Option<String>,
        /// stdio, http or sse (inferred when omitted).
        #[arg(long = "type")]
        transport: Option<String>,
        /// KEY=VALUE (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// NAME=VALUE (repeatable).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// Read a bearer token for the remote server from standard input (or
        /// a prompt); it is kept in the OS keychain and sent as
        /// `Authorization: Bearer`, never written to a config file.
        #[arg(long)]
        token_stdin: bool,
        /// Refused: a token in the command line ends up in shell history
        /// and `ps`. Use --token-stdin.
        #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "")]
        token: Option<String>,
        #[arg(long)]
        disabled: bool,
        /// The command line of a stdio server.
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Remove a server from its source (default: the winning definition's).
    /// One installed from a .mcpb bundle also loses its unpacked folder and
    /// its keychain items, unless another definition still uses them.
    Remove {
        name: String,
        #[arg(long)]
        source: Option<String>,
    },
    /// Enable a server in its source, in that client's own way.
    Enable {
        name: String,
        #[arg(long)]
        source: Option<String>,
    },
    /// Disable a server in its source, in that client's own way.
    Disable {
        name: String,
        #[arg(long)]
        source: Option<String>,
    },
    /// Rename a server within its source.
    Rename {
        from: String,
        to: String,
        #[arg(long)]
        source: Option<String>,
    },
    /// Copy a server into another client's file (in that client's format).
    Copy {
        name: String,
        #[arg(long)]
        to: String,
        #[arg(long)]
        from: Option<String>,
        /// Remove it from the original source afterwards.
        #[arg(long = "move")]
        move_it: bool,
    },
    /// Print the source priority, or set it: `switchboard priority ID ID ...`.
    Priority { ids: Vec<String> },
    /// Connect every enabled server and show its status.
    Status {
        #[arg(long)]
        json: bool,
        /// Only this server (repeatable).
        #[arg(long = "server")]
        servers: Vec<String>,
    },
    /// Connect (startup gate) and list every tool under its sanitized name.
    Tools {
        #[arg(long)]
        json: bool,
        #[arg(long = "server")]
        servers: Vec<String>,
        /// Wait for every server instead of using cached (deferred) tools.
        #[arg(long)]
        wait: bool,
        /// Only tools that changed since they were approved.
        #[arg(long)]
        changed: bool,
    },
    /// Approve a server's tools as they are now (all of them, or the TOOLs
    /// named: raw tool, prompt or resource template names). Switchboard's
    /// gateway holds a tool whose definition changed since its approval
    /// until it is approved again.
    Approve { server: String, tools: Vec<String> },
    /// Checks on what servers return through the gateway (tool results,
    /// resources, prompts): `switchboard checks list`, `switchboard checks
    /// set SERVER log|warn|block`.
    Checks {
        #[command(subcommand)]
        action: checks::ChecksAction,
    },
    /// Check every server's tool descriptions, schemas and instructions
    /// offline for hidden text, instruction overrides, requests for secrets
    /// and references to other servers' tools; exits 1 when a finding is high.
    Scan {
        #[arg(long)]
        json: bool,
        #[arg(long = "server")]
        servers: Vec<String>,
    },
    /// Call a tool by its sanitized name; prints its text.
    Call {
        name: String,
        /// Arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        #[arg(long)]
        json: bool,
        /// Only start this server (faster when you know it).
        #[arg(long = "server")]
        servers: Vec<String>,
    },
    /// List a server's resources and resource templates (JSON).
    Resources { server: String },
    /// Read one resource of a server (JSON).
    Read { server: String, uri: String },
    /// List a server's prompts (JSON).
    Prompts { server: String },
    /// Get a prompt with arguments (JSON).
    Prompt {
        server: String,
        name: String,
        #[arg(long, default_value = "{}")]
        args: String,
    },
    /// Start a server and print its log (stderr and lifecycle).
    Logs {
        server: String,
        /// Keep following until interrupted.
        #[arg(long)]
        follow: bool,
    },
    /// Add (and trust), remove, or approve the held servers of a project folder.
    ///
    /// `add` trusts it and remembers what each of its servers runs; a server
    /// that later runs something else, or appears, is held until `approve`.
    /// `approve DIR [SERVER]` runs the folder's held servers (or one): also
    /// `.mcp.json` servers Claude Code has not approved, which it records in
    /// `~/.claude.json` as Claude Code does.
    Project {
        #[arg(value_parser = ["add", "remove", "approve"])]
        action: String,
        dir: PathBuf,
        /// With `approve`: only this server.
        server: Option<String>,
        /// Add without trusting (its project files stay off).
        #[arg(long)]
        untrusted: bool,
    },
    /// Run every server and follow config changes live (reconciling only
    /// what changed) until Ctrl-C; prints one line per event.
    Watch {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Sign in to a remote server with OAuth (also: sign in again). Prints the
    /// sign-in link, opens it in the browser when there is one, waits for
    /// the browser to come back, keeps the tokens in the OS keychain.
    #[command(alias = "reauth")]
    Login {
        server: String,
        /// Only print the link; do not try to open a browser.
        #[arg(long)]
        no_browser: bool,
        /// Seconds to wait for the browser.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
    },
    /// Sign out of a server: its tokens and client registration leave the keychain.
    #[command(alias = "unauth")]
    Logout { server: String },
    /// Every change Switchboard made to a file, newest first.
    History {
        #[arg(long)]
        json: bool,
    },
    /// The calls clients made through the gateway and the app (the call
    /// journal): the newest LIMIT, oldest first, with client, server, tool,
    /// duration, outcome and findings. `--follow` keeps printing calls as
    /// they are recorded; `activity export` writes them as JSON Lines or CSV.
    Activity {
        #[command(subcommand)]
        action: Option<activity::ActivityAction>,
        #[command(flatten)]
        filter: activity::FilterArgs,
        /// How many of the newest calls to show.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// One JSON object per line (each with its findings).
        #[arg(long)]
        json: bool,
        /// Keep printing calls as they are recorded, until Ctrl-C.
        #[arg(long)]
        follow: bool,
    },
    /// Undo a change from `switchboard history` (the newest when no ID is
    /// given), unless its file changed since Switchboard wrote it.
    Undo { id: Option<u64> },
    /// Serve every server as one MCP server (the gateway): MCP on
    /// stdin/stdout, or streamable HTTP with --http. Tools are named
    /// mcp_<server>_<tool>; switched-off tools are left out.
    Serve {
        /// Serve streamable HTTP at http://ADDR/mcp instead of stdio (loopback
        /// only, e.g. 127.0.0.1:8765; port 0 picks one). Prints
        /// {"url": ..., "pid": ...} once listening. Clients send
        /// `Authorization: Bearer <token>` (see `switchboard gateway token`).
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// Serve this one server alone, under its own tool, resource and
        /// prompt names (over HTTP: at http://ADDR/mcp/NAME).
        #[arg(long, value_name = "NAME")]
        server: Option<String>,
        /// Serve one profile's servers and tools (over HTTP: at
        /// http://ADDR/mcp/p/NAME); clients hear `list_changed` when it changes.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        /// Offer only search_tools and call_tool instead of every tool, for
        /// clients that cannot take many tools.
        #[arg(long)]
        tool_search: bool,
        /// Team gateway: the folder with servers.json, settings.json
        /// (profiles) and team.json (which groups may use which profiles),
        /// followed while serving. Needs --http, --oidc-issuer and
        /// --resource; then --http may listen on any address.
        #[arg(long, value_name = "DIR", requires_all = ["http", "oidc_issuer", "resource"])]
        config: Option<std::path::PathBuf>,
        /// Team gateway: the identity provider's issuer URL; its OpenID
        /// Connect (or RFC 8414) metadata names the keys tokens are signed with.
        #[arg(long, value_name = "URL", requires = "config")]
        oidc_issuer: Option<String>,
        /// Team gateway: this gateway's public URL (e.g.
        /// https://mcp.example.com/mcp); access tokens must name it in `aud`.
        #[arg(long, value_name = "URL", requires = "config")]
        resource: Option<String>,
        /// Team gateway: the token claim listing a person's groups.
        #[arg(long, value_name = "CLAIM", default_value = "groups")]
        groups_claim: String,
        /// Team gateway: a writable folder for the call journal, caches and
        /// the servers' HOME (default: $HOME).
        #[arg(long, value_name = "DIR")]
        state: Option<std::path::PathBuf>,
        /// Team gateway: how long running calls may go on after SIGTERM.
        #[arg(long, value_name = "SECONDS", default_value_t = 25)]
        shutdown_grace: u64,
        /// Team gateway: how long a request's head and body may take to
        /// arrive (slower clients are cut off).
        #[arg(long, value_name = "SECONDS", default_value_t = 10)]
        request_timeout: u64,
    },
    /// The gateway: `switchboard gateway token` prints the bearer token that
    /// `serve --http` requires (made once, kept in the OS keychain;
    /// SWITCHBOARD_GATEWAY_TOKEN overrides it).
    Gateway {
        #[arg(value_parser = ["token"])]
        action: String,
    },
    /// Use Switchboard in another client: write one server entry named
    /// `switchboard` into CLIENT's user config, in its own format (stdio:
    /// this binary with `serve`; --http: the gateway's URL and token).
    /// Without CLIENT: list the clients and whether each is connected.
    /// Recorded in `switchboard history`; `switchboard disconnect` undoes it.
    Connect {
        /// The client's id as `switchboard connect` lists it (e.g. cursor, claude-code, codex).
        client: Option<String>,
        /// Connect to the HTTP gateway at ADDR (default 127.0.0.1 and the
        /// app gateway's port) instead of starting `switchboard serve`.
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
        http: Option<String>,
        /// Also disable, in that client, the servers the gateway serves, so
        /// they do not run twice (disconnect turns them back on).
        #[arg(long)]
        disable_duplicates: bool,
        /// Show what would be written and disabled; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Serve only this profile's servers and tools (`serve --profile
        /// NAME`, or the gateway's /mcp/p/NAME) instead of the profile
        /// switched to.
        #[arg(long, value_name = "NAME")]
        profile: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Stop using Switchboard in a client: remove its `switchboard` entry and
    /// turn back on the servers `connect --disable-duplicates` disabled.
    Disconnect {
        client: String,
        #[arg(long)]
        json: bool,
    },
    /// Switch tools off or on for the gateway: `switchboard tool off NAME…`
    /// (gateway names as `switchboard tools` prints them, or SERVER/TOOL).
    Tool {
        #[arg(value_parser = ["on", "off"])]
        action: String,
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Profiles: named sets of servers and tools, applied to clients in
    /// their own files or through the gateway (`profile --help`).
    Profile {
        #[command(subcommand)]
        action: profile::ProfileAction,
    },
    /// Count tokens (o200k_base) for the desktop app: a JSON array of
    /// strings on stdin, a JSON array of counts on stdout.
    #[command(hide = true)]
    Tokens,
    /// The MCP Registry: `switchboard registry search QUERY`, `switchboard
    /// registry show NAME`. The registry is --registry URL, else
    /// SWITCHBOARD_REGISTRY_URL, else Settings' registryUrl, else
    /// https://registry.modelcontextprotocol.io. Answers are cached; when
    /// the registry cannot be reached the cached ones are shown, with when.
    Registry {
        #[command(subcommand)]
        action: RegistryAction,
    },
    /// Install a server from the MCP Registry: its package (with the exact
    /// version pinned) or remote, with the values it asks for. Or a Claude
    /// Desktop extension, a .mcpb file: checked, shown, unpacked into
    /// Switchboard's data folder and written as a stdio server, its settings
    /// given with --config. Into Switchboard's own file (the default) secret
    /// values go to the OS keychain and the file holds ${keychain:NAME}.
    /// Secrets (and a bundle's required settings) not given as flags are
    /// asked for, or read from standard input as KEY=VALUE lines. Or an
    /// install link (VS Code's, Cursor's, LM Studio's, switchboard://) or a
    /// pasted server entry, its inputs given with --input.
    Install {
        /// The registry name, e.g. io.github.user/weather, the path of a .mcpb
        /// file, or an install link or server entry (quoted).
        name: String,
        /// ID=VALUE for an install link's input (`${input:ID}` or a placeholder's id; repeatable).
        #[arg(long = "input", value_name = "ID=VALUE")]
        inputs: Vec<String>,
        /// KEY=VALUE for a .mcpb bundle's user_config setting (repeatable; again for a multiple one).
        #[arg(long = "config", value_name = "KEY=VALUE")]
        config: Vec<String>,
        #[arg(long)]
        version: Option<String>,
        /// Which package: its number in `registry show` (1-based) or its type (npm, pypi, oci, nuget).
        #[arg(long, conflicts_with = "remote")]
        package: Option<String>,
        /// Use a remote (hosted) endpoint instead of a package (its number; default 1).
        #[arg(long, num_args = 0..=1, default_missing_value = "1")]
        remote: Option<usize>,
        /// Source id to write to (default: Switchboard's own file).
        #[arg(long, default_value = "switchboard")]
        to: String,
        /// The server's name (default: the part of the registry name after `/`).
        #[arg(long = "name")]
        as_name: Option<String>,
        /// KEY=VALUE for an environment variable (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// NAME=VALUE for an argument or URL variable (repeatable; again for repeated arguments).
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// NAME=VALUE for a header, or for a {variable} inside one (repeatable).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// Replace a server of the same name in the target file.
        #[arg(long)]
        replace: bool,
        /// Write it even when its runtime (npx, uvx, docker, dnx) is not installed
        /// here, or a bundle's compatibility check fails.
        #[arg(long)]
        skip_runtime_check: bool,
        /// Install a link even though it shows warnings (a program in a
        /// temporary folder, shell syntax, inline credentials) without being
        /// asked; needed when standard input is not a terminal.
        #[arg(long)]
        yes: bool,
        /// The registry's base URL.
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
    },
    /// Keep a value of a server in Switchboard's own file in the OS keychain
    /// instead: `switchboard keychain keep SERVER --env KEY` (or `--header
    /// NAME`). The file then holds ${keychain:SERVER.KEY}, read at each launch.
    Keychain {
        #[arg(value_parser = ["keep"])]
        action: String,
        server: String,
        #[arg(long, conflicts_with = "header", required_unless_present = "header")]
        env: Option<String>,
        #[arg(long)]
        header: Option<String>,
    },
}

#[derive(Subcommand)]
pub(crate) enum RegistryAction {
    /// Servers whose name or description matches QUERY (latest versions).
    Search {
        #[arg(default_value = "")]
        query: String,
        #[arg(long, default_value_t = 30)]
        limit: u32,
        /// The `nextCursor` of a previous search: the next page.
        #[arg(long)]
        cursor: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
    },
    /// One server: its description, versions, and how each package or
    /// remote installs (the values it asks for).
    Show {
        name: String,
        #[arg(long)]
        version: Option<String>,
        #[arg(long)]
        json: bool,
        #[arg(long, value_name = "URL")]
        registry: Option<String>,
    },
}

mod activity;
mod bundle;
mod checks;
mod connect;
mod history;
mod link;
mod profile;
mod registry;
mod runtime;
mod serve;
mod token;

fn main() -> ExitCode {
    switchboard_engine::memory::one_arena();
    switchboard_engine::tokens::use_in_process();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("switchboard: {e}");
            ExitCode::from(1)
        }
    }
}

fn opts(cli_projects: &[PathBuf]) -> DiscoverOptions {
    DiscoverOptions {
        extra_projects: cli_projects.to_vec(),
    }
}

fn load_settings(host: &Host) -> Settings {
    let (settings, warning) = Settings::load(host);
    if let Some(w) = warning {
        eprintln!("warning: {w}");
    }
    settings
}

/// The source an edit goes to: the given id, else the winning definition's.
fn pick_source(d: &Discovery, name: &str, id: Option<String>) -> anyhow::Result<SourceSpec> {
    let id = match id {
        Some(id) => id,
        None => d
            .server(name)
            .map(|s| s.winner.source.clone())
            .ok_or_else(|| {
                anyhow::anyhow!("no server named \"{name}\" was found (see `switchboard discover`)")
            })?,
    };
    d.source(&id).and_then(|s| s.spec.clone()).ok_or_else(|| {
        anyhow::anyhow!("unknown source \"{id}\" (see `switchboard discover` for source ids)")
    })
}

fn pairs(items: &[String], what: &str) -> anyhow::Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| anyhow::anyhow!("{what} \"{s}\" should look like NAME=VALUE"))
        })
        .collect()
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let host = Host::current();
    let mut settings = load_settings(&host);
    let o = opts(&cli.projects);
    match cli.command {
        c @ (Command::Status { .. }
        | Command::Tools { .. }
        | Command::Approve { .. }
        | Command::Scan { .. }
        | Command::Call { .. }
        | Command::Logs { .. }
        | Command::Resources { .. }
        | Command::Read { .. }
        | Command::Prompts { .. }
        | Command::Prompt { .. }
        | Command::Watch { .. }
        | Command::Login { .. }
        | Command::Logout { .. }
        | Command::Profile {
            action: profile::ProfileAction::Show { .. },
        }) => {
            let d = discover(&host, &settings, &o);
            let rt = tokio::runtime::Runtime::new()?;
            let roots = d.project_folders();
            return rt.block_on(runtime::run(
                host,
                d,
                c,
                runtime::Options {
                    accept_defaults: cli.accept_defaults,
                    roots,
                    projects: cli.projects.clone(),
                },
            ));
        }
        Command::Serve {
            http,
            server,
            profile,
            tool_search,
            config: Some(config),
            oidc_issuer,
            resource,
            groups_claim,
            state,
            shutdown_grace,
            request_timeout,
        } => {
            if server.is_some() || profile.is_some() || tool_search {
                anyhow::bail!("serve --config: the team gateway serves each person the profiles team.json gives them; --server, --profile and --tool-search do not apply");
            }
            let rt = tokio::runtime::Runtime::new()?;
            let o = switchboard_engine::team::TeamOptions {
                config_dir: config,
                state_dir: state.unwrap_or_else(|| host.home.clone()),
                issuer: oidc_issuer.unwrap_or_default(),
                resource: resource.unwrap_or_default(),
                groups_claim,
                shutdown_grace: std::time::Duration::from_secs(shutdown_grace),
                request_timeout: std::time::Duration::from_secs(request_timeout.max(1)),
            };
            return rt.block_on(serve::serve_team(http.unwrap_or_default(), o));
        }
        Command::Serve {
            http,
            server,
            profile,
            tool_search,
            ..
        } => {
            let rt = tokio::runtime::Runtime::new()?;
            let o = serve::Serve {
                http,
                server,
                profile,
                tool_search,
                accept_defaults: cli.accept_defaults,
                projects: cli.projects.clone(),
            };
            return rt.block_on(serve::serve(host, o));
        }
        Command::Gateway { .. } => serve::print_token()?,
        Command::Activity {
            action,
            filter,
            limit,
            json,
            follow,
        } => activity::run(
            &host,
            activity::Activity {
                action,
                filter,
                limit,
                json,
                follow,
            },
        )?,
        Command::Tokens => {
            let texts: Vec<String> =
                serde_json::from_reader(std::io::stdin().lock()).map_err(|e| {
                    anyhow::anyhow!("tokens: stdin is not a JSON array of strings: {e}")
                })?;
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let counts = switchboard_engine::tokens::count_parallel(&refs);
            println!("{}", serde_json::to_string(&counts)?);
        }
        Command::Profile { action } => {
            let d = discover(&host, &settings, &o);
            profile::run(&host, &mut settings, &d, action)?
        }
        Command::Checks { action } => {
            let d = discover(&host, &settings, &o);
            checks::run(&host, &settings, &d, action)?
        }
        Command::Connect {
            client,
            http,
            disable_duplicates,
            dry_run,
            profile,
            json,
        } => connect::connect(
            &host,
            &mut settings,
            &o,
            connect::Connect {
                client,
                http,
                disable_duplicates,
                dry_run,
                profile,
                json,
            },
        )?,
        Command::Disconnect { client, json } => {
            connect::disconnect(&host, &mut settings, &o, &client, json)?
        }
        Command::Tool { action, names } => {
            let d = discover(&host, &settings, &o);
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(serve::switch_tools(host.clone(), d, action == "on", names))?;
        }
        Command::Registry { action } => {
            let rt = tokio::runtime::Runtime::new()?;
            match action {
                RegistryAction::Search {
                    query,
                    limit,
                    cursor,
                    json,
                    registry,
                } => rt.block_on(registry::search(
                    &host,
                    &settings,
                    registry.as_deref(),
                    &query,
                    limit,
                    cursor.as_deref(),
                    json,
                ))?,
                RegistryAction::Show {
                    name,
                    version,
                    json,
                    registry,
                } => rt.block_on(registry::show(
                    &host,
                    &settings,
                    registry.as_deref(),
                    &name,
                    version.as_deref(),
                    json,
                ))?,
            }
        }
        Command::Install {
            name,
            inputs,
            config,
            version,
            package,
            remote,
            to,
            as_name,
            env,
            args,
            headers,
            replace,
            skip_runtime_check,
            // Bundles show no warnings to agree to: their checks refuse.
            yes: _,
            registry,
        } if bundle::is_bundle(&name) => {
            let registry_only = [
                ("--version", version.is_some()),
                ("--package", package.is_some()),
                ("--remote", remote.is_some()),
                ("--env", !env.is_empty()),
                ("--arg", !args.is_empty()),
                ("--header", !headers.is_empty()),
                ("--registry", registry.is_some()),
                ("--input", !inputs.is_empty()),
            ];
            if let Some((flag, _)) = registry_only.iter().find(|(_, given)| *given) {
                anyhow::bail!("{flag} is for registry installs; a .mcpb bundle takes its settings as --config KEY=VALUE");
            }
            let i = bundle::InstallBundle {
                file: name.into(),
                config,
                to,
                as_name,
                replace,
                skip_runtime_check,
            };
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(bundle::install(&host, &mut settings, &o, i))?;
        }
        Command::Install {
            name,
            inputs,
            config,
            version,
            package,
            remote,
            to,
            as_name,
            env,
            args,
            headers,
            replace,
            skip_runtime_check,
            yes,
            registry,
        } => {
            let mut name = name;
            let mut version = version;
            if link::is_link(&name) {
                if !config.is_empty() {
                    anyhow::bail!("--config is for .mcpb bundles; give an install link's values as --input ID=VALUE");
                }
                // Allowed only when the link names a registry server.
                let registry_only = [
                    ("--version", version.is_some()),
                    ("--package", package.is_some()),
                    ("--remote", remote.is_some()),
                    ("--env", !env.is_empty()),
                    ("--arg", !args.is_empty()),
                    ("--header", !headers.is_empty()),
                    ("--registry", registry.is_some()),
                ];
                let i = link::InstallLink {
                    registry_flag: registry_only
                        .iter()
                        .find(|(_, given)| *given)
                        .map(|(flag, _)| *flag),
                    text: name.clone(),
                    inputs: pairs(&inputs, "--input")?,
                    to: to.clone(),
                    as_name: as_name.clone(),
                    replace,
                    skip_runtime_check,
                    yes,
                };
                let rt = tokio::runtime::Runtime::new()?;
                match rt.block_on(link::install(&host, &mut settings, &o, i))? {
                    link::Next::Done => return Ok(()),
                    // A switchboard://install?registry=… link: the registry install.
                    link::Next::Registry(r) => {
                        name = r.name;
                        version = version.or(r.version);
                    }
                }
            } else if !inputs.is_empty() {
                anyhow::bail!("--input is for install links; \"{name}\" is a registry name (use --env, --arg, --header)");
            }
            if !config.is_empty() {
                anyhow::bail!("--config is for .mcpb bundles; \"{name}\" is a registry name (use --env, --arg, --header)");
            }
            let i = registry::Install {
                name,
                version,
                package,
                remote,
                to,
                as_name,
                env: pairs(&env, "--env")?,
                args: pairs(&args, "--arg")?,
                headers: pairs(&headers, "--header")?,
                replace,
                skip_runtime_check,
                registry,
            };
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(registry::install(&host, &mut settings, &o, i))?;
        }
        Command::Keychain {
            action: _,
            server,
            env,
            header,
        } => {
            let (group, key) = match (env, header) {
                (Some(k), _) => ("env", k),
                (None, Some(h)) => ("header", h),
                (None, None) => anyhow::bail!("give --env KEY or --header NAME"),
            };
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(registry::keep(
                &host,
                &mut settings,
                &o,
                &server,
                group,
                &key,
            ))?;
        }
        Command::Discover { json } => {
            let d = discover(&host, &settings, &o);
            if json {
                println!("{}", serde_json::to_string_pretty(&d)?);
            } else {
                print_table(&d);
            }
        }
        Command::Add {
            name,
            source,
            url,
            transport,
            env,
            headers,
            token_stdin,
            token,
            disabled,
            command,
        } => {
            if token.is_some() {
                anyhow::bail!("--token would leave the token in your shell history and in `ps`; pass it on standard input instead: `switchboard add {name} --url URL --token-stdin` (Switchboard keeps it in the OS keychain)");
            }
            let d = discover(&host, &settings, &o);
            let spec = pick_source(&d, &name, Some(source))?;
            if url.is_some() && !command.is_empty() {
                anyhow::bail!("Use either a URL or a command, not both.");
            }
            if token_stdin && url.is_none() {
                anyhow::bail!("A token needs a URL: --token-stdin is sent as an Authorization header to a remote server.");
            }
            let explicit = match transport {
                Some(t) => Some(Transport::parse_alias(&t).ok_or_else(|| {
                    anyhow::anyhow!(
                        "Invalid server config: unknown type \"{t}\" (expected stdio, http or sse)"
                    )
                })?),
                None => None,
            };
            let mut def = match (&url, command.split_first()) {
                (Some(u), _) => ServerDef::remote(&name, explicit.unwrap_or(Transport::Http), u),
                (None, Some((cmd, args))) => {
                    let mut d = ServerDef::stdio(&name, cmd, &[]);
                    d.args = args.to_vec();
                    d
                }
                (None, None) => {
                    anyhow::bail!("Invalid server config: give a command after `--` or a --url")
                }
            };
            def.env = pairs(&env, "--env")?.into_iter().collect();
            def.headers = pairs(&headers, "--header")?.into_iter().collect();
            def.enabled = !disabled;
            let token = match token_stdin {
                true => Some(token::read(&name, &def)?),
                false => None,
            };
            let seen = d.source(&spec.id).and_then(|s| s.hash);
            Writer::new(&host, &mut settings).apply(&spec, ServerEdit::Add(def.clone()), seen)?;
            if let Some(t) = token {
                if let Err(e) = token::keep(&name, def.url.as_deref().unwrap_or_default(), &t) {
                    // Without its token the server is not what the user asked for: take it out again.
                    let spec = pick_source(
                        &discover(&host, &settings, &o),
                        &name,
                        Some(spec.id.clone()),
                    )?;
                    let _ = Writer::new(&host, &mut settings).apply(
                        &spec,
                        ServerEdit::Remove { name: name.clone() },
                        None,
                    );
                    return Err(e);
                }
            }
            println!("Added \"{name}\" to {}", spec.path.display());
            if token_stdin {
                println!("Its token is in the OS keychain ({}), not in the file; `switchboard logout {name}` deletes it", switchboard_engine::auth::vault::Vault::keychain().describe());
                if spec.client != switchboard_engine::sources::Client::Switchboard {
                    println!(
                        "Only Switchboard sends it: {} itself connects without it",
                        spec.client.display_name()
                    );
                }
            }
        }
        Command::Remove { name, source } => {
            let rt = tokio::runtime::Runtime::new()?;
            rt.block_on(bundle::remove(&host, &mut settings, &o, &name, source))?;
        }
        Command::Enable { name, source } => edit(
            &host,
            &mut settings,
            &o,
            &name,
            source,
            |n| ServerEdit::SetEnabled {
                name: n,
                enabled: true,
            },
            "Enabled",
        )?,
        Command::Disable { name, source } => edit(
            &host,
            &mut settings,
            &o,
            &name,
            source,
            |n| ServerEdit::SetEnabled {
                name: n,
                enabled: false,
            },
            "Disabled",
        )?,
        Command::Rename { from, to, source } => {
            let t = to.clone();
            edit(
                &host,
                &mut settings,
                &o,
                &from,
                source,
                move |n| ServerEdit::Rename {
                    from: n,
                    to: t.clone(),
                },
                "Renamed",
            )?
        }
        Command::Copy {
            name,
            to,
            from,
            move_it,
        } => {
            let d = discover(&host, &settings, &o);
            let from = pick_source(&d, &name, from)?;
            let to = pick_source(&d, &name, Some(to))?;
            Writer::new(&host, &mut settings).copy_server(&from, &to, &name, move_it)?;
            println!(
                "{} \"{name}\" from {} to {}",
                if move_it { "Moved" } else { "Copied" },
                from.path.display(),
                to.path.display()
            );
        }
        Command::Priority { ids } => {
            let d = discover(&host, &settings, &o);
            if ids.is_empty() {
                for s in &d.sources {
                    println!("{:>3}  {}", s.priority, s.id);
                }
            } else {
                for id in &ids {
                    if d.source(id).is_none() {
                        anyhow::bail!("unknown source \"{id}\" (see `switchboard priority`)");
                    }
                }
                // The named sources first, the rest as they are in the newest
                // settings: a change the app made meanwhile is kept, not undone.
                Settings::update(&host, |s| {
                    let current = ordered_sources(&host, s, &o)
                        .into_iter()
                        .map(|spec| spec.id)
                        .collect();
                    s.priority = put_first(&ids, current);
                })
                .map_err(EditError::from)?;
                println!("Saved the new source priority");
            }
        }
        Command::History { json } => history::print(&History::for_host(&host), json)?,
        Command::Undo { id } => {
            let report = History::for_host(&host).undo(id)?;
            let restored: Vec<String> = report
                .restored
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let recorded = report
                .recorded_as
                .map(|n| format!(" (recorded as #{n})"))
                .unwrap_or_default();
            println!(
                "Undid #{}: {}; restored {}{recorded}",
                report.undone,
                report.summary,
                restored.join(", ")
            );
        }
        Command::Project {
            action,
            dir,
            server,
            untrusted,
        } => {
            use switchboard_engine::projects;
            let abs = switchboard_engine::discovery::absolute(&dir);
            if server.is_some() && action != "approve" {
                anyhow::bail!("a SERVER is given only to `switchboard project approve DIR SERVER`");
            }
            match action.as_str() {
                "add" => {
                    projects::set_trust(&host, &abs, !untrusted)?;
                    println!(
                        "Added project {}{}",
                        abs.display(),
                        if untrusted {
                            " (not trusted: its servers stay off)"
                        } else {
                            ""
                        }
                    );
                }
                "remove" => {
                    projects::remove(&host, &abs)?;
                    println!("Removed project {}", abs.display());
                }
                _ => {
                    let d = discover(&host, &settings, &o);
                    let done =
                        projects::approve(&host, &mut settings, &d, &abs, server.as_deref())?;
                    if done.servers.is_empty() {
                        println!(
                            "Nothing is held in {}{}",
                            abs.display(),
                            server.map(|s| format!(" for \"{s}\"")).unwrap_or_default()
                        );
                    }
                    for n in &done.servers {
                        let cc = if done.for_claude_code.contains(n) {
                            " (also approved for Claude Code in ~/.claude.json)"
                        } else {
                            ""
                        };
                        println!("Approved \"{n}\" in {}{cc}", abs.display());
                    }
                }
            }
        }
    }
    Ok(())
}

fn edit(
    host: &Host,
    settings: &mut Settings,
    o: &DiscoverOptions,
    name: &str,
    source: Option<String>,
    make: impl Fn(String) -> ServerEdit,
    verb: &str,
) -> anyhow::Result<()> {
    let d = discover(host, settings, o);
    let spec = pick_source(&d, name, source)?;
    let seen = d.source(&spec.id).and_then(|s| s.hash);
    Writer::new(host, settings).apply(&spec, make(name.to_string()), seen)?;
    println!("{verb} \"{name}\" in {}", spec.path.display());
    Ok(())
}

fn print_table(d: &Discovery) {
    println!("SOURCES (highest priority first)");
    for s in &d.sources {
        let state = if !s.exists {
            "absent"
        } else if s.read_only {
            "locked"
        } else {
            ""
        };
        println!(
            "{:>3}  {:<40} {:>3} servers  {:<7} {}",
            s.priority,
            s.id,
            s.server_count,
            state,
            s.path.display()
        );
        for w in &s.warnings {
            println!("       ! {w}");
        }
    }
    println!();
    println!("SERVERS");
    for s in &d.servers {
        let w = &s.winner;
        let what = w.def.url.clone().unwrap_or_else(|| {
            std::iter::once(w.def.command.clone().unwrap_or_default())
                .chain(w.def.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ")
        });
        let state = if !w.errors.is_empty() {
            "invalid"
        } else if w.not_runnable.is_some() {
            "external"
        } else if w.held.is_some() {
            "held"
        } else if !w.def.enabled {
            "disabled"
        } else {
            "enabled"
        };
        println!(
            "  {:<28} {:<6} {:<9} {:<28} {}",
            w.def.name,
            w.def.transport.as_str(),
            state,
            w.source,
            what
        );
        for sh in &s.shadowed {
            println!("      shadows {} ({})", sh.source, sh.path.display());
        }
        if let Some(n) = &w.not_runnable {
            println!("      note: {n}");
        }
        if let Some(h) = &w.held {
            println!(
                "      held: {} (switchboard project approve DIR {})",
                h.reason(),
                w.def.name
            );
            if let switchboard_engine::trust::Held::Changed { changes, .. } = h {
                for c in changes {
                    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
                    println!(
                        "        {}: {} → {}",
                        c.field,
                        show(&c.before),
                        show(&c.after)
                    );
                }
            }
        }
        for e in &w.errors {
            println!("      error: {e}");
        }
        for x in &w.warnings {
            println!("      warning: {x}");
        }
    }
    for e in &d.errors {
        println!("error: {e}");
    }
}
