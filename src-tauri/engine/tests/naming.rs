//! Tool names shown to models and users, and schema patching.

use std::collections::HashSet;

use serde_json::json;
use switchboard_engine::naming::{
    assign_names, patch_schema, sanitize_part, tool_name, ToolRef, MAX_TOOL_NAME_LEN,
};

fn refs(pairs: &[(&str, &str)]) -> Vec<ToolRef> {
    pairs.iter().map(|(s, t)| ToolRef::new(*s, *t)).collect()
}

fn assert_all_unique(names: &[String]) {
    let unique: HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "names must be unique: {names:?}");
}

fn assert_well_formed(name: &str) {
    assert!(
        name.len() <= MAX_TOOL_NAME_LEN,
        "{name:?} is longer than {MAX_TOOL_NAME_LEN}"
    );
    assert!(
        name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
        "{name:?} has characters outside [a-z_]"
    );
    assert!(!name.contains("__"), "{name:?} has a run of underscores");
}

#[test]
fn sanitize_lowercases_replaces_and_collapses() {
    assert_eq!(sanitize_part("My-Server"), "my_server");
    assert_eq!(sanitize_part("my.server"), "my_server");
    assert_eq!(sanitize_part("a--b..c__d"), "a_b_c_d");
    assert_eq!(sanitize_part("plain_name"), "plain_name");
    assert_eq!(sanitize_part(""), "");
}

#[test]
fn digits_become_underscores_like_the_seed() {
    assert_eq!(sanitize_part("tool_42"), "tool_");
    assert_eq!(sanitize_part("v2api"), "v_api");
    assert_eq!(tool_name("s3", "get-object"), "mcp_s_get_object");
}

#[test]
fn unicode_is_lowercased_then_replaced() {
    assert_eq!(sanitize_part("Ärger"), "_rger");
    assert_eq!(sanitize_part("数据库-query"), "_query");
    assert_eq!(sanitize_part("ÉCOLE"), "_cole");
    assert_eq!(tool_name("日本", "検索"), "mcp_");
    assert_well_formed(&tool_name("日本", "検索"));
}

#[test]
fn builds_mcp_server_tool() {
    assert_eq!(
        tool_name("filesystem", "read_file"),
        "mcp_filesystem_read_file"
    );
    assert_eq!(tool_name("My Server", "Do.Thing"), "mcp_my_server_do_thing");
    // Parts starting or ending with `_` do not leave a double underscore.
    assert_eq!(tool_name("x-", "-y"), "mcp_x_y");
}

#[test]
fn server_prefix_is_removed_once() {
    assert_eq!(
        tool_name("github", "github_create_issue"),
        "mcp_github_create_issue"
    );
    assert_eq!(
        tool_name("github", "github_github_x"),
        "mcp_github_github_x"
    );
    assert_eq!(
        tool_name("GitHub", "github-create-issue"),
        "mcp_github_create_issue"
    );
    // Only a whole `<server>_` prefix counts, and the tool must keep a name.
    assert_eq!(tool_name("git", "github_search"), "mcp_git_github_search");
    assert_eq!(tool_name("github", "github_"), "mcp_github_github_");
    assert_eq!(tool_name("github", "github"), "mcp_github_github");
}

#[test]
fn a_gateways_tool_keeps_one_mcp_prefix() {
    // A team gateway "acme" names its server fx's tool echo `mcp_fx_echo`;
    // through this gateway it is `mcp_acme_fx_echo`, not `mcp_acme_mcp_fx_echo`.
    assert_eq!(tool_name("acme", "mcp_fx_echo"), "mcp_acme_fx_echo");
    assert_eq!(tool_name("acme", "MCP-fx-echo"), "mcp_acme_fx_echo");
    // Once only, then the server's own prefix as before.
    assert_eq!(tool_name("acme", "mcp_mcp_x"), "mcp_acme_mcp_x");
    assert_eq!(tool_name("acme", "mcp_acme_x"), "mcp_acme_x");
    // A tool called just that keeps its name.
    assert_eq!(tool_name("acme", "mcp_"), "mcp_acme_mcp_");
    assert_eq!(tool_name("acme", "mcp"), "mcp_acme_mcp");
    // A tool of the same server without the prefix collides, and both stay
    // reachable.
    let naming = assign_names(&[
        ToolRef::new("acme", "mcp_fx_echo"),
        ToolRef::new("acme", "fx_echo"),
    ]);
    assert_eq!(naming.collisions.len(), 1);
    assert_ne!(naming.names[0], naming.names[1]);
}

#[test]
fn long_names_are_capped_with_a_stable_hash() {
    let server = "a-server-with-a-rather-long-name";
    let tool_a = "and_a_tool_whose_name_goes_on_and_on_and_on_alpha";
    let tool_b = "and_a_tool_whose_name_goes_on_and_on_and_on_beta";
    let a = tool_name(server, tool_a);
    let b = tool_name(server, tool_b);
    assert_eq!(a.len(), MAX_TOOL_NAME_LEN, "{a}");
    assert_well_formed(&a);
    assert_well_formed(&b);
    assert_ne!(a, b, "names cut at the same place must still differ");
    assert_eq!(&a[..57], &b[..57]);
    // Stable across calls and runs: pinned value.
    assert_eq!(a, tool_name(server, tool_a));
    assert_eq!(
        a, PINNED_LONG_NAME,
        "the hash of a cut name changed; it must be stable across releases"
    );
}

const PINNED_LONG_NAME: &str = "mcp_a_server_with_a_rather_long_name_and_a_tool_whose_nam_vwojyi";

#[test]
fn short_names_are_not_touched() {
    let name = tool_name("s", &"t".repeat(58)); // mcp_s_ + 58 = 64
    assert_eq!(name.len(), 64);
    assert!(name.ends_with("tttt"));
}

#[test]
fn seed_collision_keeps_both_tools_and_reports_it() {
    let tools = refs(&[("my-server", "search"), ("my.server", "search")]);
    let naming = assign_names(&tools);
    assert_all_unique(&naming.names);
    // `my-server` < `my.server` as raw strings, so it keeps the plain name.
    assert_eq!(naming.names[0], "mcp_my_server_search");
    assert!(
        naming.names[1].starts_with("mcp_my_server_search_"),
        "{:?}",
        naming.names
    );
    assert_eq!(naming.names[1].len(), "mcp_my_server_search_".len() + 4);
    assert_well_formed(&naming.names[1]);

    assert_eq!(naming.collisions.len(), 1);
    let c = &naming.collisions[0];
    assert_eq!(c.name, "mcp_my_server_search");
    assert_eq!(c.tools, tools);
    assert_eq!(c.resolved, naming.names);
}

#[test]
fn no_collision_no_report() {
    let naming = assign_names(&refs(&[("a", "x"), ("b", "x"), ("a", "y")]));
    assert_eq!(naming.names, ["mcp_a_x", "mcp_b_x", "mcp_a_y"]);
    assert!(naming.collisions.is_empty());
}

#[test]
fn names_do_not_depend_on_input_order() {
    let tools = refs(&[
        ("my-server", "search"),
        ("my.server", "search"),
        ("My_Server", "Search"),
        ("other", "tool_1"),
        ("other", "tool_2"),
        ("other", "other_tool_3"),
        ("x", "y"),
    ]);
    let forward = assign_names(&tools);
    let mut reversed = tools.clone();
    reversed.reverse();
    let backward = assign_names(&reversed);
    for (i, t) in tools.iter().enumerate() {
        let j = reversed.iter().position(|r| r == t).unwrap();
        assert_eq!(
            forward.names[i], backward.names[j],
            "{t:?} got a different name after reordering"
        );
    }
    assert_eq!(forward.collisions, backward.collisions);
    assert_all_unique(&forward.names);
}

#[test]
fn suffix_never_takes_another_tools_plain_name() {
    // Find the suffix `b/x` would get, then make a real tool with that name.
    let first = assign_names(&refs(&[("a", "x"), ("a.", "x")]));
    let suffixed = first.names[1].clone();
    let tool = suffixed.strip_prefix("mcp_a_").unwrap().to_string();
    let tools = refs(&[("a", "x"), ("a.", "x"), ("a", &tool)]);
    let naming = assign_names(&tools);
    assert_all_unique(&naming.names);
    assert_eq!(
        naming.names[2], suffixed,
        "the real name wins over a collision suffix"
    );
    assert!(
        naming.names[1].starts_with(&suffixed) && naming.names[1].len() == suffixed.len() + 1,
        "{:?}",
        naming.names
    );
}

#[test]
fn identical_duplicates_still_get_distinct_names() {
    let naming = assign_names(&refs(&[("a", "x"), ("a", "x"), ("a", "x")]));
    assert_all_unique(&naming.names);
    assert_eq!(naming.collisions[0].resolved.len(), 3);
}

#[test]
fn ten_thousand_tools_that_sanitize_alike_get_unique_names() {
    let tools: Vec<ToolRef> = (0..10_000)
        .map(|i| ToolRef::new("srv", format!("tool_{i}")))
        .collect();
    let naming = assign_names(&tools);
    assert_eq!(naming.names.len(), 10_000);
    assert_all_unique(&naming.names);
    naming.names.iter().for_each(|n| assert_well_formed(n));
    assert_eq!(naming.collisions.len(), 1);
    assert_eq!(naming.collisions[0].name, "mcp_srv_tool_");
    assert_eq!(naming.collisions[0].tools.len(), 10_000);
    // `tool_0` is the smallest raw name, so it keeps the plain name.
    assert_eq!(naming.names[0], "mcp_srv_tool_");
}

#[test]
fn long_colliding_names_stay_within_the_cap() {
    let long = "x".repeat(80);
    let tools = refs(&[("a-b", &long), ("a.b", &long), ("A_B", &long)]);
    let naming = assign_names(&tools);
    assert_all_unique(&naming.names);
    naming.names.iter().for_each(|n| assert_well_formed(n));
}

#[test]
fn patch_schema_adds_missing_properties_only() {
    assert_eq!(
        patch_schema(json!({"type": "object"})),
        json!({"type": "object", "properties": {}})
    );
    let full =
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    assert_eq!(patch_schema(full.clone()), full);
    assert_eq!(
        patch_schema(json!({"type": "string"})),
        json!({"type": "string"})
    );
    assert_eq!(patch_schema(json!(true)), json!(true));
    assert_eq!(patch_schema(json!({})), json!({}));
}
