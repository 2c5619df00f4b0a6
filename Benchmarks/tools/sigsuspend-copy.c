// Preloaded into regcoded and pass-sim when they run under valgrind (Benchmarks/instructions.sh).
//
// Swift's async main runs libdispatch's dispatch_main(), whose main thread ends in sigsuspend() with a
// mask that lives in read-only memory. Valgrind's rt_sigsuspend wrapper removes its own kill signal from
// that mask in place, so valgrind itself dies with SIGSEGV as the program starts. Passing a copy on the
// stack changes nothing for the program and lets valgrind run it.
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    // The kernel's sigset is 8 bytes on Linux, not glibc's 128-byte sigset_t.
    return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
}
