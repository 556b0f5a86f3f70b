#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// About how many descriptors the server holds besides its connections: the database and its
/// log, the lock and key files, the listeners, each event loop's epoll and wake-up descriptors.
let serverOwnFileDescriptors = 64

/// The descriptors an open-file limit leaves for connections, on both ports together.
func connectionDescriptors(underOpenFileLimit limit: UInt64) -> UInt64 {
    limit > UInt64(serverOwnFileDescriptors) ? limit - UInt64(serverOwnFileDescriptors) : 0
}

/// Lifts the soft open-file limit to the hard one, so thousands of connections fit.
/// Returns the soft limit in force afterwards.
@discardableResult
func raiseOpenFileLimit() -> UInt64 {
    #if canImport(Glibc)
    let resource = Int32(RLIMIT_NOFILE.rawValue)
    #else
    let resource = RLIMIT_NOFILE
    #endif
    var limit = rlimit()
    guard getrlimit(resource, &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(resource, &raised) == 0 { return UInt64(raised.rlim_cur) }
    }
    return UInt64(limit.rlim_cur)
}

/// Makes a write past the file-size limit (`ulimit -f`) fail with EFBIG, which the caller
/// reports and survives (the store as a failed write, a backup as an error), instead of the
/// kernel's SIGXFSZ killing the process with a core dump.
func failWritesPastFileSizeLimit() {
    signal(SIGXFSZ, SIG_IGN)
}
