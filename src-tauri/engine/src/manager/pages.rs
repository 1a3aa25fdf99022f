//! Paginated lists a server cannot turn into endless loops: every page is
//! its own request under the caller's timeout, and the listing stops at a
//! cursor seen before or after `MAX_PAGES` pages, keeping what it has and
//! saying why. Tool lists are also bounded in memory: the tools of every
//! server are held (and shown, and cached) for as long as it runs, so
//! descriptions are cut page by page to a per-tool and a per-server budget.

use std::collections::HashSet;
use std::future::Future;

use rmcp::model::{PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool};
use rmcp::service::Peer;
use rmcp::{RoleClient, ServiceError};

/// More pages than any honest server sends (10,000 tools in pages of 10).
pub const MAX_PAGES: usize = 1000;
/// Longest tool description kept (real ones are well under 4 KiB).
pub const MAX_DESCRIPTION: usize = 4 * 1024;
/// Description bytes kept per server before the rest are cut shorter.
pub const DESCRIPTION_BUDGET: usize = 1024 * 1024;
/// What a description is cut to once a server's budget is spent.
pub const SHORT_DESCRIPTION: usize = 128;

/// A whole list, and why it stopped early if it did.
#[derive(Debug)]
pub struct Listed<T> {
    pub items: Vec<T>,
    pub warning: Option<String>,
}

/// Follow `nextCursor` from the first page, guarded against repeats.
pub async fn all_pages<T, F, Fut>(what: &str, page: F) -> Result<Listed<T>, ServiceError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    all_pages_kept(what, page, |_| {}).await
}

/// [`all_pages`], with `keep` applied to each page as it arrives (so what
/// is cut never accumulates).
async fn all_pages_kept<T, F, Fut>(
    what: &str,
    mut page: F,
    mut keep: impl FnMut(&mut Vec<T>),
) -> Result<Listed<T>, ServiceError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut seen = HashSet::new();
    let (mut items, mut cursor) = page(None).await?;
    keep(&mut items);
    let mut pages = 1;
    while let Some(c) = cursor {
        if !seen.insert(c.clone()) {
            return Ok(Listed { items, warning: Some(format!("{what}: the server sent the cursor \"{}\" twice; the list stops there ({pages} pages)", shorten(&c))) });
        }
        if pages >= MAX_PAGES {
            return Ok(Listed {
                items,
                warning: Some(format!(
                    "{what}: more than {MAX_PAGES} pages; the list stops there"
                )),
            });
        }
        let (mut more, next) = page(Some(c)).await?;
        keep(&mut more);
        items.extend(more);
        cursor = next;
        pages += 1;
    }
    Ok(Listed {
        items,
        warning: None,
    })
}

/// Cuts tool descriptions to [`MAX_DESCRIPTION`], and to
/// [`SHORT_DESCRIPTION`] once a server has used its [`DESCRIPTION_BUDGET`].
#[derive(Default)]
struct DescriptionBudget {
    used: usize,
    cut: usize,
}

impl DescriptionBudget {
    fn keep(&mut self, tools: &mut [Tool]) {
        for t in tools {
            let Some(d) = t.description.as_mut() else {
                continue;
            };
            let limit = if self.used >= DESCRIPTION_BUDGET {
                SHORT_DESCRIPTION
            } else {
                MAX_DESCRIPTION
            };
            if d.len() > limit {
                let mut end = limit;
                while !d.is_char_boundary(end) {
                    end -= 1;
                }
                let more = d.len() - end;
                *d = format!("{}… [cut by Switchboard: {more} more bytes]", &d[..end]).into();
                self.cut += 1;
            }
            self.used += d.len();
        }
    }

    fn warning(&self) -> Option<String> {
        (self.cut > 0).then(|| {
            format!(
                "tools/list: {} tool descriptions were longer than Switchboard keeps ({} KiB each, {} bytes each after the first {} MiB of a server's descriptions) and were cut",
                self.cut,
                MAX_DESCRIPTION / 1024,
                SHORT_DESCRIPTION,
                DESCRIPTION_BUDGET / (1024 * 1024)
            )
        })
    }
}

fn shorten(s: &str) -> &str {
    match s.char_indices().nth(40) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

fn params(cursor: Option<String>) -> Option<PaginatedRequestParams> {
    Some(PaginatedRequestParams::default().with_cursor(cursor))
}

/// Every tool, descriptions cut to the budget (see [`MAX_DESCRIPTION`]).
pub async fn tools(peer: &Peer<RoleClient>) -> Result<Listed<Tool>, ServiceError> {
    let mut budget = DescriptionBudget::default();
    let mut l = all_pages_kept(
        "tools/list",
        |c| async move {
            peer.list_tools(params(c))
                .await
                .map(|r| (r.tools, r.next_cursor))
        },
        |page| budget.keep(page),
    )
    .await?;
    if let Some(w) = budget.warning() {
        l.warning = Some(match l.warning {
            Some(first) => format!("{first}; {w}"),
            None => w,
        });
    }
    Ok(l)
}

pub async fn resources(peer: &Peer<RoleClient>) -> Result<Listed<Resource>, ServiceError> {
    all_pages("resources/list", |c| async move {
        peer.list_resources(params(c))
            .await
            .map(|r| (r.resources, r.next_cursor))
    })
    .await
}

pub async fn resource_templates(
    peer: &Peer<RoleClient>,
) -> Result<Listed<ResourceTemplate>, ServiceError> {
    all_pages("resources/templates/list", |c| async move {
        peer.list_resource_templates(params(c))
            .await
            .map(|r| (r.resource_templates, r.next_cursor))
    })
    .await
}

pub async fn prompts(peer: &Peer<RoleClient>) -> Result<Listed<Prompt>, ServiceError> {
    all_pages("prompts/list", |c| async move {
        peer.list_prompts(params(c))
            .await
            .map(|r| (r.prompts, r.next_cursor))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_repeated_cursor_ends_the_list_with_a_warning() {
        let mut calls = 0;
        let l =
            all_pages("tools/list", |c| {
                calls += 1;
                async move {
                    Ok::<_, ServiceError>((vec![c.unwrap_or_default()], Some("1".to_string())))
                }
            })
            .await
            .unwrap();
        assert_eq!(
            calls, 2,
            "first page, then the page at cursor 1; the repeat of 1 is not requested"
        );
        assert_eq!(l.items, ["", "1"]);
        assert!(l.warning.unwrap().contains("cursor \"1\" twice"));
    }

    #[tokio::test]
    async fn endless_fresh_cursors_stop_at_the_page_cap() {
        let mut n = 0u64;
        let l = all_pages("prompts/list", |_| {
            n += 1;
            let next = n.to_string();
            async move { Ok::<_, ServiceError>((vec![()], Some(next))) }
        })
        .await
        .unwrap();
        assert_eq!(l.items.len(), MAX_PAGES);
        assert!(l.warning.unwrap().contains("more than 1000 pages"));
    }

    #[test]
    fn long_descriptions_are_cut_and_a_servers_budget_is_kept() {
        let tool = |d: String| Tool::new("t", d, std::sync::Arc::new(serde_json::Map::new()));
        let mut b = DescriptionBudget::default();
        let mut page = vec![tool("short".into()), tool("é".repeat(MAX_DESCRIPTION))];
        b.keep(&mut page);
        assert_eq!(page[0].description.as_deref(), Some("short"));
        let cut = page[1].description.as_deref().unwrap();
        assert!(
            cut.len() < MAX_DESCRIPTION + 64
                && cut.ends_with(&format!(
                    "[cut by Switchboard: {} more bytes]",
                    2 * MAX_DESCRIPTION - MAX_DESCRIPTION
                )),
            "{}",
            &cut[cut.len() - 60..]
        );
        // 10,000 tools of 10 KB: the server's descriptions stay within a few MiB.
        let mut total = 0;
        for _ in 0..100 {
            let mut page: Vec<Tool> = (0..100).map(|_| tool("x".repeat(10 * 1024))).collect();
            b.keep(&mut page);
            total += page
                .iter()
                .map(|t| t.description.as_ref().map_or(0, |d| d.len()))
                .sum::<usize>();
        }
        assert!(
            total < DESCRIPTION_BUDGET + 10_000 * (SHORT_DESCRIPTION + 64),
            "{total} bytes kept"
        );
        assert!(b.warning().unwrap().contains("10001 tool descriptions"));
    }

    #[tokio::test]
    async fn honest_lists_are_complete() {
        let l = all_pages("x", |c| async move {
            Ok::<_, ServiceError>(match c.as_deref() {
                None => (vec![1, 2], Some("a".into())),
                Some("a") => (vec![3], Some("b".into())),
                _ => (vec![4], None),
            })
        })
        .await
        .unwrap();
        assert_eq!(l.items, [1, 2, 3, 4]);
        assert!(l.warning.is_none());
    }
}
