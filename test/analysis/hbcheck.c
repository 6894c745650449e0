/* hbcheck DIR: happened-before in a trace, checked with the reader's own matching (not
 * with vtrace compensate's code): no receive ends before its send started, no member of
 * an n-to-n collective leaves before the last member entered, no non-root of a 1-to-n
 * collective (Bcast, Scatter) leaves before the root entered. Exit 0 and a count line,
 * or 1 naming the first violations. */
#include "format/reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ent {
    uint64_t comm, seq;
    uint32_t rank;
    int kind, root;
    int64_t enter, exit;
} ent;

static int cmp(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->comm != y->comm)
        return x->comm < y->comm ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int kind_of(const char *n)
{
    const char *nn[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
                        "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", NULL};
    for (int i = 0; nn[i]; i++)
        if (!strcmp(n, nn[i]))
            return 1;
    if (!strcmp(n, "MPI_Bcast") || !strcmp(n, "MPI_Scatter") || !strcmp(n, "MPI_Scatterv"))
        return 2;
    return 0;
}

int main(int argc, char **argv)
{
    vt_error err;
    vt_trace *t;
    vt_matches *m;
    if (argc != 2 || vt_trace_open(argv[1], &t, &err) || vt_trace_match(t, 0, &m, &err)) {
        fprintf(stderr, "hbcheck: %s\n", argc != 2 ? "usage: hbcheck DIR" : err.msg);
        return 2;
    }
    int bad = 0;
    uint64_t nmsg = 0, ncoll = 0;
    size_t nk;
    const vt_match_key *keys = vt_matches_keys(m, &nk);
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        size_t n;
        const vt_match_crecv *cr = vt_matches_crecvs(m, r, &n);
        const vt_match_recv *fr = vt_matches_recvs(m, r, &n);
        (void)cr;
        (void)keys;
        for (size_t i = 0; i < n; i++) {
            /* the send's enter: stream the sender up to the record */
            vt_cursor *c;
            vt_event ev;
            if (vt_cursor_open(t, fr[i].send_rank, &c, &err))
                return 2;
            int64_t send_enter = 0;
            while (vt_cursor_next(c, &ev, &err) == 1)
                if (ev.index == fr[i].send_index) {
                    send_enter = vt_global_time(t, fr[i].send_rank, ev.enter);
                    break;
                }
            vt_cursor_close(c);
            int64_t recv_end = vt_global_time(t, r, fr[i].done_exit);
            nmsg++;
            if (recv_end < send_enter && bad++ < 5)
                fprintf(stderr, "hbcheck: rank %u record %" PRIu64 " receives (ends %" PRId64
                                ") before its send on rank %u record %" PRIu64 " starts (%" PRId64 ")\n",
                        r, fr[i].done_index, recv_end, fr[i].send_rank, fr[i].send_index, send_enter);
        }
    }
    ent *v = NULL;
    size_t nv = 0, cap = 0;
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        vt_event ev;
        if (vt_cursor_open(t, r, &c, &err))
            return 2;
        while (vt_cursor_next(c, &ev, &err) == 1) {
            if (ev.fn < 0 || !(ev.fields & VT_F_COLLSEQ))
                continue;
            const vt_function *f = vt_trace_function(t, r, ev.fn);
            const vt_comm *cm = vt_trace_comm(t, r, ev.comm);
            int k = f && cm ? kind_of(f->name) : 0;
            if (!k || (cm->flags & 1))
                continue;
            if (nv == cap) {
                cap = cap ? 2 * cap : 256;
                v = realloc(v, cap * sizeof *v);
            }
            v[nv++] = (ent){cm->id, ev.collseq, r, k, ev.root == (int64_t)r, vt_global_time(t, r, ev.enter),
                            vt_global_time(t, r, ev.exit)};
        }
        vt_cursor_close(c);
    }
    if (nv)
        qsort(v, nv, sizeof *v, cmp);
    for (size_t i = 0; i < nv;) {
        size_t j = i;
        int64_t last = INT64_MIN, root = INT64_MIN;
        while (j < nv && v[j].comm == v[i].comm && v[j].seq == v[i].seq) {
            if (v[j].enter > last)
                last = v[j].enter;
            if (v[j].root)
                root = v[j].enter;
            j++;
        }
        ncoll++;
        for (size_t k = i; k < j; k++) {
            int64_t need = v[k].kind == 1 ? last : (v[k].root ? INT64_MIN : root);
            if (v[k].exit < need && bad++ < 5)
                fprintf(stderr, "hbcheck: rank %u leaves collective %" PRIu64 " at %" PRId64 " before %s entry %" PRId64
                                "\n", v[k].rank, v[k].seq, v[k].exit, v[k].kind == 1 ? "the last" : "the root's",
                        need);
        }
        i = j;
    }
    free(v);
    vt_matches_free(m);
    vt_trace_close(t);
    if (bad) {
        fprintf(stderr, "hbcheck: %d violations\n", bad);
        return 1;
    }
    printf("hbcheck: %" PRIu64 " messages, %" PRIu64 " collectives: happened-before holds\n", nmsg, ncoll);
    return 0;
}
