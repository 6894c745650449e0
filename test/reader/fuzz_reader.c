/* libFuzzer target for the reader: test/reader/run-fuzz.sh builds and runs it.
 *
 * The input is a whole trace: the files concatenated, each starting with its magic
 * ("VTRACE\0D" for vtrace.defs, then "VTRACE\0E" for rank 0, 1, ...); it is cut before
 * every "VTRACE\0" and handed to vt_trace_open_mem(), which runs the same code as
 * vt_trace_open() on a directory. Every rank is then streamed and matched.
 * Built with -DVT_FUZZ_STANDALONE it has a main() that runs the files given, to replay
 * a corpus or a crash without libFuzzer (for example under valgrind). */
#include "format/reader.h"
#include "fuzz_input.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_files in;
    fuzz_split(data, size, &in);
    vt_trace *t;
    vt_error err;
    if (vt_trace_open_mem(in.f, in.n, &t, &err)) {
        if (!strstr(err.msg, ": offset "))
            __builtin_trap();
        return 0;
    }
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        vt_event ev;
        if (vt_cursor_open(t, r, &c, &err))
            continue;
        int got;
        if (vt_trace_rank(t, r)->reduced) {
            vt_rrec rr;
            while ((got = vt_cursor_next_reduced(c, &rr, &err)) == 1) {
                (void)vt_trace_function(t, r, rr.fn);
                (void)vt_trace_callsite(t, r, rr.callsite);
                for (size_t i = 0; i < rr.nmsgs; i++)
                    (void)vt_global_time(t, rr.msgs[i].src, rr.msgs[i].S);
                for (size_t i = 0; i < rr.nssends; i++)
                    (void)vt_global_time(t, rr.ssends[i].dst, rr.ssends[i].S);
                for (size_t i = 0; i < rr.ngates; i++)
                    (void)rr.gates[i].nmembers;
            }
            if (got < 0 && !strstr(err.msg, ": offset "))
                __builtin_trap();
            vt_cursor_close(c);
            continue;
        }
        while ((got = vt_cursor_next(c, &ev, &err)) == 1) {
            (void)vt_global_time(t, r, ev.enter);
            (void)vt_trace_function(t, r, ev.fn);
            (void)vt_trace_comm(t, r, ev.comm);
            (void)vt_trace_callsite(t, r, ev.callsite);
            for (size_t i = 0; i < ev.ndone; i++)
                (void)ev.done[i].bytes;
            for (size_t i = 0; i < ev.nstarted; i++)
                (void)ev.started[i];
        }
        if (got < 0 && !strstr(err.msg, ": offset "))
            __builtin_trap();
        vt_cursor_close(c);
    }
    for (unsigned flags = 0; flags < 2; flags++) {
        vt_matches *m;
        if (vt_trace_match(t, flags ? VT_MATCH_PARTIAL : 0, &m, &err) == 0) {
            for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
                size_t nr, ns;
                const vt_match_recv *rv = vt_matches_recvs(m, r, &nr);
                for (size_t i = 0; i < nr; i++) {
                    if (rv[i].send_pos == SIZE_MAX)
                        continue;
                    const vt_match_send *s = vt_matches_sends(m, rv[i].send_rank, &ns);
                    if (rv[i].send_pos >= ns || s[rv[i].send_pos].dst != r)
                        __builtin_trap();
                }
            }
            vt_matches_free(m);
        } else if (!strstr(err.msg, ": offset ")) {
            __builtin_trap();
        }
    }
    vt_trace_close(t);
    return 0;
}

#ifdef VT_FUZZ_STANDALONE
/* Without libFuzzer: runs each file given (a corpus entry or a crash) once, e.g. under
 * valgrind: cc -DVT_FUZZ_STANDALONE with the sources run-fuzz.sh names -lz -lzstd */
#include <stdlib.h>

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        uint8_t *buf = NULL;
        size_t n = 0, cap = 0, got;
        do {
            if (n == cap) {
                cap = cap ? cap * 2 : 65536;
                uint8_t *p = realloc(buf, cap);
                if (!p)
                    return 1;
                buf = p;
            }
            got = fread(buf + n, 1, cap - n, f);
            n += got;
        } while (got > 0);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
    }
    return 0;
}
#endif
