#include "vt_config.h"
#include "tracing/crash.h"
#include "tracing/buffer.h"
#include "util/codec.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int fatal[] = {SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
#define NFATAL (sizeof fatal / sizeof fatal[0])

static vt_crash_end_fn *end_fn;
static volatile sig_atomic_t ended;
static struct sigaction previous[NFATAL];
static int installed[NFATAL];
static int exit_hooked;
static void *altstack;

static int end_once(void)
{
    /* the first of a signal, MPI_Abort, exit and MPI_Finalize ends the trace */
    return __atomic_exchange_n(&ended, 1, __ATOMIC_SEQ_CST) == 0 && end_fn;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (end_once())
        end_fn(VT_END_SIGNAL, sig, 1);
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal[i] == sig)
            sigaction(sig, &previous[i], NULL);
    /* A fault the processor raised happens again when the handler returns, now with the
     * action there was before ours (the default one, or the handler it chains to) and the
     * faulting context, as without vtrace; a signal sent by kill(2), raise(3) or abort(3)
     * is sent again. */
    int fault = (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) && si && si->si_code > 0;
    if (!fault) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig);
    }
}

static void on_exit_hook(int status, void *arg)
{
    (void)arg;
    if (end_once())
        end_fn(VT_END_EXIT, status, 0);
}

void vt_crash_abort(int code)
{
    if (end_once())
        end_fn(VT_END_ABORT, code, 0);
}

/* ------------------------------------------------------------------ the flush timer */

static pthread_t timer;
static int timer_running;
static int64_t interval;

static void *timer_main(void *arg)
{
    (void)arg;
    struct timespec ts = {(time_t)(interval / 1000000000), (long)(interval % 1000000000)};
    for (;;) {
        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == EINTR)
            ;
        vt_buffer_request_flush();
    }
    return NULL;
}

static void start_timer(int64_t ns)
{
    interval = ns;
    /* the program's signals go to its own threads, never to the timer */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    timer_running = pthread_create(&timer, NULL, timer_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ------------------------------------------------------------------ setup */

void vt_crash_start(vt_crash_end_fn *end, int signals, int64_t interval_ns)
{
    end_fn = end;
    ended = 0;
    if (interval_ns > 0)
        start_timer(interval_ns);
    if (!signals)
        return;
    if (!exit_hooked)
        exit_hooked = on_exit(on_exit_hook, NULL) == 0;
    /* a stack of its own, so that a stack overflow's SIGSEGV still writes the trace */
    stack_t cur;
    if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
        size_t size = 65536 + (size_t)SIGSTKSZ;
        altstack = malloc(size);
        stack_t st = {.ss_sp = altstack, .ss_size = size, .ss_flags = 0};
        if (altstack && sigaltstack(&st, NULL)) {
            free(altstack);
            altstack = NULL;
        }
    }
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigfillset(&sa.sa_mask);
        if (sigaction(fatal[i], NULL, &previous[i]))
            continue;
        /* A program's own handler of SIGTERM or SIGINT may well go on running (a clean
         * shutdown): its business. The faults and SIGABRT end the run whoever handles
         * them (UCX, under MPICH, prints a backtrace): ours writes the trace first, then
         * theirs runs. */
        int mine = !(previous[i].sa_flags & SA_SIGINFO) && previous[i].sa_handler == SIG_DFL;
        int fault = fatal[i] != SIGTERM && fatal[i] != SIGINT;
        if (!mine && !(fault && ((previous[i].sa_flags & SA_SIGINFO) || previous[i].sa_handler != SIG_IGN)))
            continue;
        installed[i] = sigaction(fatal[i], &sa, NULL) == 0;
    }
}

void vt_crash_stop(void)
{
    ended = 1;
    if (timer_running) {
        pthread_cancel(timer);
        pthread_join(timer, NULL);
        timer_running = 0;
    }
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction now;
        /* given back only if nobody replaced ours since */
        if (installed[i] && sigaction(fatal[i], NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
            now.sa_sigaction == on_signal)
            sigaction(fatal[i], &previous[i], NULL);
        installed[i] = 0;
    }
}

/* ------------------------------------------------------------------ reserve */

static uint8_t *reserve;
static size_t reserve_cap;

uint8_t *vt_crash_reserve(size_t need, size_t *cap)
{
    if (need > reserve_cap) {
        size_t c = need + need / 2;
        uint8_t *r = malloc(c);
        if (r) {
            /* the old one stays valid until the new one is in place: a signal may come */
            uint8_t *old = reserve;
            reserve = r;
            reserve_cap = c;
            free(old);
        }
    }
    if (cap)
        *cap = reserve_cap;
    return reserve;
}
