//! Independent jobs spread over the cores (scoped threads): the parallel
//! inflate of deflated npz blocks and the parallel read of a large file
//! into memory. No dependency: std's scoped threads do it (rayon stays an
//! optional feature for the public `par_rows_mut`).

/// Runs `work` on every job, on up to every core (and at most `most`
/// threads), and returns the first error.
pub(crate) fn run_parallel<J: Send, E: Send>(
    jobs: Vec<J>,
    most: usize,
    work: impl Fn(J) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 64)
        .min(jobs.len())
        .min(most);
    if workers <= 1 {
        return jobs.into_iter().try_for_each(work);
    }
    // Round-robin: neighbouring blocks (equal work) spread over the workers.
    let mut shares: Vec<Vec<J>> = (0..workers).map(|_| Vec::new()).collect();
    for (k, job) in jobs.into_iter().enumerate() {
        shares[k % workers].push(job);
    }
    let work = &work;
    std::thread::scope(|scope| {
        let mut shares = shares.into_iter();
        let own = shares.next().unwrap_or_default();
        let handles: Vec<_> = shares
            .map(|share| scope.spawn(move || share.into_iter().try_for_each(work)))
            .collect();
        let mut result = own.into_iter().try_for_each(work);
        for handle in handles {
            let joined = handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            if result.is_ok() {
                result = joined;
            }
        }
        result
    })
}
