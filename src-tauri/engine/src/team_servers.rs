//! A team gateway seen from this machine: the team servers it serves this
//! person, read from the tools it lists. A team gateway says it is one in
//! `initialize` (`serverInfo.name` [`TEAM_SERVER_NAME`]) and marks each tool
//! with the team server it belongs to and its name there (`_meta`
//! [`TEAM_SERVER_META`], [`TEAM_TOOL_META`]).

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde::Serialize;

use crate::gateway::{TEAM_SERVER_META, TEAM_SERVER_NAME, TEAM_TOOL_META};

/// One team server, as the team gateway offers it to this person: defined
/// by the team, not on this machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TeamServer {
    pub name: String,
    /// Sorted by their name on the team server.
    pub tools: Vec<TeamTool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TeamTool {
    /// Its name on the team server (`create_issue`).
    pub name: String,
    /// Its name as the team gateway lists it (`mcp_github_create_issue`).
    pub tool: String,
}

/// The team servers of a connected server whose `serverInfo.name` is
/// `server_name`, sorted by name; `None` when it is not a team gateway.
/// A tool without both marks is not grouped (it is still in the tool list).
pub fn team_servers(server_name: Option<&str>, tools: &[Tool]) -> Option<Vec<TeamServer>> {
    if server_name != Some(TEAM_SERVER_NAME) {
        return None;
    }
    let mut by_server: BTreeMap<&str, Vec<TeamTool>> = BTreeMap::new();
    for t in tools {
        let Some(meta) = &t.meta else { continue };
        let mark = |key: &str| meta.0.get(key).and_then(|v| v.as_str());
        let (Some(server), Some(name)) = (mark(TEAM_SERVER_META), mark(TEAM_TOOL_META)) else {
            continue;
        };
        by_server.entry(server).or_default().push(TeamTool {
            name: name.to_string(),
            tool: t.name.to_string(),
        });
    }
    Some(
        by_server
            .into_iter()
            .map(|(name, mut tools)| {
                tools.sort_by(|a, b| a.name.cmp(&b.name));
                TeamServer {
                    name: name.to_string(),
                    tools,
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map, Value};
    use std::sync::Arc;

    fn tool(name: &str, meta: Option<Value>) -> Tool {
        let mut t = Tool::new(name.to_string(), "", Arc::new(Map::new()));
        t.meta = meta.map(|m| serde_json::from_value(m).unwrap());
        t
    }

    fn marked(name: &str, server: &str, raw: &str) -> Tool {
        tool(
            name,
            Some(json!({ TEAM_SERVER_META: server, TEAM_TOOL_META: raw })),
        )
    }

    #[test]
    fn groups_a_team_gateways_tools_by_team_server() {
        let tools = [
            marked("mcp_jira_search", "jira", "search"),
            marked("mcp_github_list_issues", "github", "list_issues"),
            marked("mcp_github_create_issue", "github", "create_issue"),
            tool("unmarked", None),
            tool("half", Some(json!({ TEAM_SERVER_META: "github" }))),
        ];
        let got = team_servers(Some(TEAM_SERVER_NAME), &tools).unwrap();
        let names: Vec<(&str, Vec<(&str, &str)>)> = got
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.tools
                        .iter()
                        .map(|t| (t.name.as_str(), t.tool.as_str()))
                        .collect(),
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                (
                    "github",
                    vec![
                        ("create_issue", "mcp_github_create_issue"),
                        ("list_issues", "mcp_github_list_issues")
                    ]
                ),
                ("jira", vec![("search", "mcp_jira_search")]),
            ]
        );
    }

    #[test]
    fn other_servers_are_not_team_gateways_whatever_their_tools_say() {
        let tools = [marked("mcp_github_list_issues", "github", "list_issues")];
        assert_eq!(team_servers(Some("switchboard"), &tools), None);
        assert_eq!(team_servers(None, &tools), None);
        assert_eq!(
            team_servers(Some(TEAM_SERVER_NAME), &[]),
            Some(vec![]),
            "a team gateway that lets this person use nothing"
        );
    }
}
