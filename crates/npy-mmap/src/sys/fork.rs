//! `fork`: handlers run around it (`pthread_atfork`), for the lock
//! registry (`lock::registry`).

/// Runs `before` in the thread that calls `fork`, just before it, then
/// `parent` in that thread of the parent, and `child` in the child's only
/// thread, just after (`pthread_atfork`). A failure to install (no memory)
/// leaves forks unwatched, as before.
///
/// `child` gets a function that closes a descriptor, and calls it only for
/// descriptors *abandoned* in the child: ones that an operation of a thread
/// other than the forking one was using at that moment (the lock
/// registry's busy files). In the child that thread does not exist, so
/// nothing will ever use or close them, and while open they would keep the
/// parent's open file descriptions, and every lock the parent takes on
/// them, alive for the child's whole life. This is a crate-internal
/// contract: the one caller is `lock::registry`.
#[cfg(unix)]
pub fn on_fork(before: fn(), parent: fn(), child: fn(&mut dyn FnMut(std::os::fd::RawFd))) {
    struct Handlers {
        before: fn(),
        parent: fn(),
        child: fn(&mut dyn FnMut(std::os::fd::RawFd)),
    }
    static HANDLERS: std::sync::OnceLock<Handlers> = std::sync::OnceLock::new();
    if HANDLERS
        .set(Handlers {
            before,
            parent,
            child,
        })
        .is_err()
    {
        return;
    }
    extern "C" fn prepare() {
        if let Some(handlers) = HANDLERS.get() {
            (handlers.before)();
        }
    }
    extern "C" fn in_parent() {
        if let Some(handlers) = HANDLERS.get() {
            (handlers.parent)();
        }
    }
    extern "C" fn in_child() {
        if let Some(handlers) = HANDLERS.get() {
            (handlers.child)(&mut |fd| {
                // SAFETY: `child` hands over only abandoned descriptors (the
                // contract above): their owner never runs again in this
                // process, so closing one pulls no descriptor from under
                // live code. An error (EBADF, EINTR) leaves nothing to undo.
                unsafe {
                    libc::close(fd);
                }
            });
        }
    }
    // SAFETY: the three handlers are `extern "C"` functions with no
    // arguments that live for the whole program, as `pthread_atfork`
    // requires; they only read a `OnceLock` set before they are installed,
    // and call functions that take or release one `Mutex` (and, in the
    // child, close abandoned descriptors), in the thread that forks (the
    // child's only thread afterwards).
    unsafe {
        libc::pthread_atfork(Some(prepare), Some(in_parent), Some(in_child));
    }
}

/// No `fork` here.
#[cfg(not(unix))]
pub fn on_fork(_before: fn(), _parent: fn(), _child: fn(&mut dyn FnMut(u64))) {}
