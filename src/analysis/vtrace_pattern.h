/* vtrace_pattern.h: the plug-in API of `vtrace patterns` (installed header).
 *
 * A plug-in is a shared object loaded with `vtrace patterns --plugin FILE.so DIR`. It
 * exports one C function, named by VTRACE_PATTERN_ENTRY:
 *
 *     #include <vtrace_pattern.h>
 *     static const vtrace_pattern me = {VTRACE_PATTERN_API_VERSION, "My pattern", ...};
 *     const vtrace_pattern *vtrace_pattern_plugin(void) { return &me; }
 *
 * Build it with `cc -shared -fPIC -o my.so my.c -I$PREFIX/include`; it needs no vtrace
 * library (everything it gets comes through the structures below).
 *
 * Calls, in this order, all from one thread:
 *   begin(nranks, config)   once; returns the plug-in's state (NULL is a valid state);
 *                           config is the trace's configuration text (KEY=value lines)
 *   event(state, ev)        once per MPI call record of a full trace: rank 0's records in
 *                           order, then rank 1's, ...; *ev and its strings are valid
 *                           during the call only. Not called for reduced traces (their
 *                           records are not the program's calls).
 *   finish(state, &out)     once; returns the number of findings in *out (an array the
 *                           plug-in owns, valid until end())
 *   end(state)              once; frees the state
 * Every callback may be NULL except finish. A callback must not exit or longjmp.
 *
 * Findings are summed by (pattern, rank, call site) and shown with the built-in
 * patterns; a finding's pattern name NULL means the plug-in's name. Severities are
 * durations in ns, like the built-in patterns' (the share of the run time is computed
 * by vtrace).
 *
 * The API is versioned: a plug-in sets api_version to VTRACE_PATTERN_API_VERSION;
 * vtrace refuses another version. New fields are only ever appended to the structures
 * (new versions). */
#ifndef VTRACE_PATTERN_H
#define VTRACE_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VTRACE_PATTERN_API_VERSION 1u
#define VTRACE_PATTERN_ENTRY "vtrace_pattern_plugin"

/* One MPI call of one rank. Absent fields hold -1 (or 0 for byte counts). */
typedef struct vtrace_pattern_event {
    uint32_t rank;          /* world rank */
    uint64_t index;         /* record index on the rank (as `vtrace dump` prints it) */
    const char *function;   /* "MPI_Wait", "MPI_Send", ... */
    int64_t enter_ns;       /* global times (clock offsets to rank 0 applied), ns */
    int64_t exit_ns;
    int64_t callsite;       /* call-site index of the rank, -1 unknown */
    const char *site;       /* "function (file:line)" (debug information), else
                             * "symbol@module+0xOFFSET", "module+0xOFFSET"; "" unknown */
    int64_t peer;           /* send side: destination world rank (-2 MPI_PROC_NULL) */
    int64_t tag;            /* send side: tag */
    uint64_t bytes;         /* send side: bytes (collectives: bytes sent) */
    int64_t rpeer;          /* receive side: source world rank */
    int64_t rtag;           /* receive side: tag */
    uint64_t rbytes;        /* receive side: bytes */
    int64_t root;           /* collectives with a root: its world rank */
    /* The matched partner, where the trace links one: for a call that completes a
     * receive (MPI_Recv, the MPI_Wait of an MPI_Irecv, ...), the send whose call entered
     * last; for a send (or the Wait completing an MPI_Isend), the receiving side: the
     * enter of the call that posted the receive and the exit of the call that
     * completed it. npartners is 0 when none is known. */
    uint32_t npartners;     /* messages this call sends or completes with a known partner */
    uint32_t partner_rank;
    int64_t partner_enter_ns;
    int64_t partner_exit_ns;
} vtrace_pattern_event;

typedef struct vtrace_pattern_finding {
    const char *pattern;    /* NULL: the plug-in's name */
    uint32_t rank;
    int64_t callsite;       /* call-site index of that rank (vtrace_pattern_event.callsite), -1 none */
    int64_t severity_ns;    /* time lost, ns (>= 0) */
    uint64_t count;         /* instances */
} vtrace_pattern_finding;

typedef struct vtrace_pattern {
    uint32_t api_version;   /* VTRACE_PATTERN_API_VERSION */
    const char *name;       /* e.g. "Long MPI_Wait"; must not be NULL */
    void *(*begin)(uint32_t nranks, const char *config);
    void (*event)(void *state, const vtrace_pattern_event *ev);
    size_t (*finish)(void *state, const vtrace_pattern_finding **out);
    void (*end)(void *state);
} vtrace_pattern;

/* The entry point every plug-in exports (name: VTRACE_PATTERN_ENTRY). */
typedef const vtrace_pattern *(*vtrace_pattern_entry)(void);
const vtrace_pattern *vtrace_pattern_plugin(void);

#ifdef __cplusplus
}
#endif

#endif
