//! Work split over the machine's cores with scoped threads: for the few
//! places where independent pieces (files, texts) are done at once and the
//! caller waits for all of them.

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// `f` of every chunk of `items` (one chunk per core), concatenated in order.
pub fn map_chunks<T: Sync, R: Send>(items: &[T], f: impl Fn(&[T]) -> Vec<R> + Sync) -> Vec<R> {
    if items.is_empty() {
        return vec![];
    }
    let chunks: Vec<&[T]> = items.chunks(items.len().div_ceil(cores())).collect();
    map(chunks, f).into_iter().flatten().collect()
}

/// `f` of every item, in order, spread over the machine's cores (scoped
/// threads; one item or one core: on this thread).
pub fn map<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = cores().min(items.len());
    if threads < 2 {
        return items.into_iter().map(f).collect();
    }
    // Round-robin, so big and small files mix on each thread.
    let mut parts: Vec<Vec<(usize, T)>> = (0..threads).map(|_| vec![]).collect();
    for (i, item) in items.into_iter().enumerate() {
        parts[i % threads].push((i, item));
    }
    let f = &f;
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| {
                scope.spawn(move || part.into_iter().map(|(i, t)| (i, f(t))).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}
