// The worker's last words: a fatal signal (segfault, abort, file-size limit, ...) is reported to the
// parent over the worker socket before the process dies of it, with the faulting address (so the
// parent can say "wrote past the end of output 'y'" or "wrote to input 'x'") and the thread's errno
// (ENOMEM after a failed allocation turns a NULL-pointer crash into ErrorKind::Memory).
// The handler is async-signal-safe: it formats digits by hand and makes one send() call.
#pragma once

namespace ekb::runtime {

// Installs the handlers (with an alternate signal stack for the calling thread, so a stack
// overflow on the main thread is still reported). Call once, in the worker.
void install_crash_reporter(int socket_fd);

// Clears errno of the calling thread, so that a stale ENOMEM from before a kernel call is not
// blamed on the kernel.
void clear_errno();

}  // namespace ekb::runtime
