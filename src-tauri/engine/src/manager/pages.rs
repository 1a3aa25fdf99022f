//! Paginated lists a server cannot turn into endless loops: every page is
//! its own request under the caller's timeout, and the listing stops at a
//! cursor seen before or after `MAX_PAGES` pages, keeping what it has and
//! saying why (SPEC P5).

use std::collections::HashSet;
use std::future::Future;

use rmcp::model::{PaginatedRequestParams, Prompt, Resource, ResourceTemplate, Tool};
use rmcp::service::Peer;
use rmcp::{RoleClient, ServiceError};

/// More pages than any honest server sends (10,000 tools in pages of 10).
pub const MAX_PAGES: usize = 1000;

/// A whole list, and why it stopped early if it did.
#[derive(Debug)]
pub struct Listed<T> {
    pub items: Vec<T>,
    pub warning: Option<String>,
}

/// Follow `nextCursor` from the first page, guarded against repeats.
pub async fn all_pages<T, F, Fut>(what: &str, mut page: F) -> Result<Listed<T>, ServiceError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut seen = HashSet::new();
    let (mut items, mut cursor) = page(None).await?;
    let mut pages = 1;
    while let Some(c) = cursor {
        if !seen.insert(c.clone()) {
            return Ok(Listed { items, warning: Some(format!("{what}: the server sent the cursor \"{}\" twice; the list stops there ({pages} pages)", shorten(&c))) });
        }
        if pages >= MAX_PAGES {
            return Ok(Listed { items, warning: Some(format!("{what}: more than {MAX_PAGES} pages; the list stops there")) });
        }
        let (more, next) = page(Some(c)).await?;
        items.extend(more);
        cursor = next;
        pages += 1;
    }
    Ok(Listed { items, warning: None })
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

pub async fn tools(peer: &Peer<RoleClient>) -> Result<Listed<Tool>, ServiceError> {
    all_pages("tools/list", |c| async move { peer.list_tools(params(c)).await.map(|r| (r.tools, r.next_cursor)) }).await
}

pub async fn resources(peer: &Peer<RoleClient>) -> Result<Listed<Resource>, ServiceError> {
    all_pages("resources/list", |c| async move { peer.list_resources(params(c)).await.map(|r| (r.resources, r.next_cursor)) }).await
}

pub async fn resource_templates(peer: &Peer<RoleClient>) -> Result<Listed<ResourceTemplate>, ServiceError> {
    all_pages("resources/templates/list", |c| async move { peer.list_resource_templates(params(c)).await.map(|r| (r.resource_templates, r.next_cursor)) }).await
}

pub async fn prompts(peer: &Peer<RoleClient>) -> Result<Listed<Prompt>, ServiceError> {
    all_pages("prompts/list", |c| async move { peer.list_prompts(params(c)).await.map(|r| (r.prompts, r.next_cursor)) }).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_repeated_cursor_ends_the_list_with_a_warning() {
        let mut calls = 0;
        let l = all_pages("tools/list", |c| {
            calls += 1;
            async move { Ok::<_, ServiceError>((vec![c.unwrap_or_default()], Some("1".to_string()))) }
        })
        .await
        .unwrap();
        assert_eq!(calls, 2, "first page, then the page at cursor 1; the repeat of 1 is not requested");
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
