//! Profiles as the user sees them: each profile's servers (with the ones
//! that no longer exist shown as missing, never dropped), its tools and
//! what their definitions cost in tokens (`tokens`), who uses it, and the
//! changes the CLI and the app make to the profiles in Switchboard's
//! settings (history, undo and conflict checks as every settings write).

use std::collections::HashMap;

use rmcp::model::Tool;
use serde::Serialize;

use crate::discovery::Discovery;
use crate::events::ServerStatus;
use crate::host::Host;
use crate::manager::Manager;
use crate::profile::{Profile, ProfileError, ProfileSettings, ToolRule, EVERYTHING};
use crate::settings::{Settings, SettingsError};
use crate::tokens::{count_definitions, TOKENIZER};

/// One tool as a client of the gateway sees it, with its cost.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolCost {
    /// The gateway name (`mcp_<server>_<tool>`).
    pub name: String,
    pub server: String,
    /// The raw name on its server.
    pub tool: String,
    /// Tokens of its definition ([`TOKENIZER`]).
    pub tokens: u32,
}

/// Every tool the manager knows now, with its cost, in the index's order.
/// Each definition is counted as the gateway offers it (gateway name,
/// schema with `properties`).
pub fn tool_costs(manager: &Manager) -> Vec<ToolCost> {
    let index = manager.tools();
    // Per server: its tool list and where each raw name sits in it.
    type Listed = (std::sync::Arc<Vec<Tool>>, HashMap<String, usize>);
    let mut by_server: HashMap<&str, Listed> = HashMap::new();
    let mut defs: Vec<Tool> = Vec::with_capacity(index.tools.len());
    let mut kept = Vec::with_capacity(index.tools.len());
    for e in &index.tools {
        let (list, names) = by_server.entry(e.server.as_str()).or_insert_with(|| {
            let list = manager.server_tools(&e.server).unwrap_or_default();
            let names = list
                .iter()
                .enumerate()
                .map(|(i, t)| (t.name.to_string(), i))
                .collect();
            (list, names)
        });
        let mut t = match names.get(&e.tool) {
            Some(i) => list[*i].clone(),
            // A cached (deferred) tool: what the index keeps of it.
            None => Tool::new(
                e.name.clone(),
                e.description.as_deref().unwrap_or_default().to_string(),
                e.input_schema.clone(),
            ),
        };
        t.name = e.name.clone().into();
        t.input_schema = crate::naming::with_properties(&t.input_schema);
        defs.push(t);
        kept.push(e);
    }
    let counts = count_definitions(&defs);
    kept.into_iter()
        .zip(counts)
        .map(|(e, tokens)| ToolCost {
            name: e.name.clone(),
            server: e.server.clone(),
            tool: e.tool.clone(),
            tokens,
        })
        .collect()
}

/// One server of a profile.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileServerView {
    pub name: String,
    /// No source defines a server of this name any more: the profile keeps
    /// it (it comes back when the server does), and shows it as missing.
    pub missing: bool,
    /// Whether it runs now (`None`: not known to the manager).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub status: Option<ServerStatus>,
    /// Absent: every tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub rule: Option<ToolRule>,
    /// Its tools the profile lets through.
    pub tools: Vec<ToolCost>,
    /// Its tools the profile leaves out.
    pub left_out: Vec<ToolCost>,
    /// Tokens of the tools let through.
    pub tokens: u32,
}

/// A profile with its servers, tools and cost.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProfileView {
    pub name: String,
    /// The built-in profile (every server, every tool).
    pub built_in: bool,
    /// What the switch is on (the gateway's `/mcp` serves it).
    pub active: bool,
    pub servers: Vec<ProfileServerView>,
    /// Tokens of every tool definition it offers.
    pub tokens: u32,
    pub tokenizer: &'static str,
    /// Client ids and project folders that follow it.
    pub used_by: Vec<String>,
    /// Over the smallest budget of the clients using it (or the default
    /// budget): the biggest contributors, and what tool search would cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub over_budget: Option<OverBudget>,
}

/// A profile whose tool definitions cost more than a client's budget.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OverBudget {
    pub budget: u32,
    /// Servers costing the most, largest first: (server, tokens).
    pub biggest: Vec<(String, u32)>,
    /// Tokens of the gateway's tool-search pair (`search_tools`,
    /// `call_tool`), offered instead of every tool.
    pub tool_search_tokens: u32,
}

/// Tokens of the two tools the gateway offers in tool-search mode.
pub fn tool_search_tokens(total: usize) -> u32 {
    count_definitions(&crate::gateway::search::tools(total))
        .into_iter()
        .sum()
}

/// What each profile holds and costs now.
pub fn views(settings: &Settings, discovery: &Discovery, manager: &Manager) -> Vec<ProfileView> {
    let costs = tool_costs(manager);
    let p = &settings.profiles;
    let mut out = vec![view(None, p, discovery, manager, &costs)];
    for profile in &p.list {
        out.push(view(Some(profile), p, discovery, manager, &costs));
    }
    out
}

/// One profile (`None`: Everything).
pub fn view(
    profile: Option<&Profile>,
    p: &ProfileSettings,
    discovery: &Discovery,
    manager: &Manager,
    costs: &[ToolCost],
) -> ProfileView {
    let name = profile.map(|x| x.name.clone()).unwrap_or(EVERYTHING.into());
    let names: Vec<(String, Option<ToolRule>)> = match profile {
        Some(x) => x
            .servers
            .iter()
            .map(|s| (s.name.clone(), s.tools.clone()))
            .collect(),
        None => manager
            .server_names()
            .into_iter()
            .filter(|n| {
                manager
                    .status(n)
                    .is_some_and(|s| s != ServerStatus::Disabled)
            })
            .map(|n| (n, None))
            .collect(),
    };
    let mut servers = vec![];
    for (server, rule) in names {
        let (tools, left_out): (Vec<ToolCost>, Vec<ToolCost>) = costs
            .iter()
            .filter(|c| c.server == server)
            .cloned()
            .partition(|c| rule.as_ref().is_none_or(|r| r.allows(&c.tool)));
        servers.push(ProfileServerView {
            missing: discovery.server(&server).is_none(),
            status: manager.status(&server),
            tokens: tools.iter().map(|t| t.tokens).sum(),
            name: server,
            rule,
            tools,
            left_out,
        });
    }
    let tokens = servers.iter().map(|s| s.tokens).sum();
    let used_by = p.users_of(&name);
    let budget = used_by
        .iter()
        .map(|u| p.budget(u))
        .min()
        .unwrap_or_else(|| p.budget("default"));
    let over_budget = (tokens > budget).then(|| OverBudget {
        budget,
        biggest: crate::tokens::biggest(servers.iter().map(|s| (s.name.as_str(), s.tokens)), 3),
        tool_search_tokens: tool_search_tokens(servers.iter().map(|s| s.tools.len()).sum()),
    });
    ProfileView {
        built_in: profile.is_none(),
        active: p.active_name().eq_ignore_ascii_case(&name),
        servers,
        tokens,
        tokenizer: TOKENIZER,
        used_by,
        over_budget,
        name,
    }
}

/// Change the profiles in the newest settings file (hash-checked, applied
/// again on top of a concurrent change, recorded in the history). A change
/// the profiles refuse writes nothing.
pub fn change(
    host: &Host,
    f: impl Fn(&mut ProfileSettings) -> Result<(), ProfileError>,
) -> Result<Settings, SettingsError> {
    let s = Settings::try_update(host, |s| f(&mut s.profiles).map_err(SettingsError::from))?;
    // Gateways in this process serve the change at once.
    crate::gateway::switches::nudge(host);
    Ok(s)
}

/// Servers among `names` that no source defines, refused when adding (a
/// typo would make a profile that silently serves less).
pub fn unknown_servers(discovery: &Discovery, names: &[String]) -> Result<(), ProfileError> {
    let unknown: Vec<String> = names
        .iter()
        .filter(|n| discovery.server(n).is_none())
        .cloned()
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(ProfileError::UnknownServers(unknown))
}

/// What one client's tool definitions cost: the servers it loads (its own
/// files' enabled servers, or a profile's through the gateway) and their
/// tokens, against its budget.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientCost {
    /// The client's id (`cursor`).
    pub client: String,
    pub label: &'static str,
    /// The profile it follows, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub profile: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub via: Option<crate::profile::Via>,
    /// (server, tokens), in the order its files list them; the gateway
    /// entry counts as the profile it serves.
    pub servers: Vec<(String, u32)>,
    pub tokens: u32,
    pub tokenizer: &'static str,
    pub budget: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub over_budget: Option<OverBudget>,
}

/// The cost of every client that has a config file here. A server's tools
/// are the ones the manager lists for that name (its winning definition).
pub fn client_costs(
    settings: &Settings,
    discovery: &Discovery,
    manager: &Manager,
) -> Vec<ClientCost> {
    let costs = tool_costs(manager);
    let p = &settings.profiles;
    let server_tokens = |name: &str| -> u32 {
        costs
            .iter()
            .filter(|c| c.server == name)
            .map(|c| c.tokens)
            .sum()
    };
    let profile_servers = |name: &str| -> Vec<(String, u32)> {
        let v = view(p.filter(name).ok().flatten(), p, discovery, manager, &costs);
        v.servers.into_iter().map(|s| (s.name, s.tokens)).collect()
    };
    let mut out: Vec<ClientCost> = vec![];
    for source in &discovery.sources {
        use crate::sources::Client;
        if matches!(
            source.client,
            Client::Switchboard | Client::Team | Client::Fallback
        ) || !source.exists
        {
            continue;
        }
        // The id commands take (`cursor`), as `connect` names clients.
        let id = serde_json::to_value(source.client)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let mut servers: Vec<(String, u32)> = vec![];
        for s in &discovery.servers {
            for d in s
                .definitions
                .iter()
                .filter(|d| d.source == source.id && d.def.enabled)
            {
                if crate::discovery::is_gateway_entry(s.name(), &d.def) {
                    let served =
                        gateway_profile(&d.def).unwrap_or_else(|| p.active_name().to_string());
                    servers.extend(profile_servers(&served));
                } else {
                    servers.push((s.name().to_string(), server_tokens(s.name())));
                }
            }
        }
        match out.iter_mut().find(|c| c.client == id) {
            Some(c) => c.servers.extend(servers),
            None => out.push(ClientCost {
                profile: p.clients.get(&id).map(|c| c.profile.clone()),
                via: p.clients.get(&id).map(|c| c.via),
                budget: p.budget(&id),
                label: source.client.display_name(),
                client: id,
                servers,
                tokens: 0,
                tokenizer: TOKENIZER,
                over_budget: None,
            }),
        }
    }
    for c in &mut out {
        let mut seen = std::collections::HashSet::new();
        c.servers.retain(|(n, _)| seen.insert(n.clone()));
        c.tokens = c.servers.iter().map(|(_, t)| t).sum();
        if c.tokens > c.budget {
            c.over_budget = Some(OverBudget {
                budget: c.budget,
                biggest: crate::tokens::biggest(c.servers.iter().map(|(n, t)| (n.as_str(), *t)), 3),
                tool_search_tokens: tool_search_tokens(costs.len()),
            });
        }
    }
    out
}

/// The profile a gateway entry serves: `serve --profile NAME` or a URL
/// ending in `/mcp/p/NAME` (`None`: the active profile, `/mcp`).
pub fn gateway_profile(def: &crate::config::ServerDef) -> Option<String> {
    if let Some(i) = def.args.iter().position(|a| a == "--profile") {
        return def.args.get(i + 1).cloned();
    }
    let url = url::Url::parse(def.url.as_deref()?).ok()?;
    let mut segs = url.path_segments()?;
    match (segs.next(), segs.next(), segs.next()) {
        (Some("mcp"), Some("p"), Some(name)) => Some(
            url::form_urlencoded::parse(format!("n={name}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_else(|| name.to_string()),
        ),
        _ => None,
    }
}
