/* vtrace dump: one line per record. */
#include "tools/tools.h"
#include "analysis/symbols.h"
#include "util/codec.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void vt__usage_dump(FILE *out)
{
    fprintf(out, "usage: vtrace dump [--json] [--rank N | --event RANK:SEQ] DIR\n\n"
                 "Prints every record of the trace in DIR, rank by rank, one line each:\n"
                 "  RANK:SEQ ENTER EXIT NAME key=value... record=INDEX\n"
                 "RANK:SEQ is the event's id, the one every vtrace command uses (whatif, domino,\n"
                 "critical-path, the report): SEQ counts a rank's computation bursts and calls from 0,\n"
                 "so a call is odd and RANK:SEQ-1 is the computation before it (RANK:- for FLUSH,\n"
                 "MARKER and STOPPED, which are no events). ENTER and EXIT are global times in ns; NAME\n"
                 "is the MPI function, or FLUSH, MARKER, STOPPED; INDEX counts the rank's records.\n"
                 "Present fields: comm= newcomm= (communicator ids in hex, newcomm=null for\n"
                 "MPI_COMM_NULL), peer= tag= bytes= (send side), src= rtag= rbytes= (receive side),\n"
                 "root= seq= (the collective's number on its communicator, not the event's) req= msg=\n"
                 "file= offset= started=[REQ,...] done=[REQ:PEER:TAG:BYTES:FLAGS,...]\n"
                 "site=FUNCTION(FILE:LINE) (debug information found) or SYMBOL@MODULE+0xOFFSET,\n"
                 "kind= value= (MARKER), reason= (STOPPED).\n"
                 "A reduced trace prints its records instead: RANK:SEQ ENTER EXIT KIND fn=\n"
                 "flags= rstar= msgs=[SRC:SEND_SEQ:S:BYTES:sync|eager[:POST_SEQ:P],...]\n"
                 "ssends=[DST:SEND_SEQ:S:BYTES,...] gates=[COMM:SEQ:MEMBERS:NONBLOCKING,...]\n"
                 "site= record=INDEX (KIND: START, CAND, COMP, NBCINIT, END; vtrace(1): format.md).\n\n"
                 "  --json      one JSON object per line instead, with the same keys (and rank, index, seq)\n"
                 "  --rank N    only rank N\n"
                 "  --event RANK:SEQ  only that event's record (a computation's: the call that ends it)\n"
                 VT__USAGE_DEBUG_DIR
                 "  -h, --help  this text\n");
}

typedef struct em {
    FILE *out;
    int json;
    int first;
} em;

static void em_key(em *e, const char *k)
{
    if (e->json)
        vt__json_key(e->out, &e->first, k);
    else
        fprintf(e->out, " %s=", k);
}

static void em_i64(em *e, const char *k, int64_t v)
{
    em_key(e, k);
    fprintf(e->out, "%" PRId64, v);
}

static void em_u64(em *e, const char *k, uint64_t v)
{
    em_key(e, k);
    fprintf(e->out, "%" PRIu64, v);
}

static void em_id(em *e, const char *k, uint64_t id)
{
    em_key(e, k);
    fprintf(e->out, e->json ? "\"0x%" PRIx64 "\"" : "0x%" PRIx64, id);
}

static void em_null(em *e, const char *k)
{
    em_key(e, k);
    fputs("null", e->out);
}

static void em_str(em *e, const char *k, const char *s)
{
    em_key(e, k);
    if (e->json)
        vt__json_str(e->out, s);
    else
        vt__text_token(e->out, s);
}

/* A call site: in the text form "function(file:line)", one token. */
static void em_site(em *e, const char *name)
{
    const char *sp = strstr(name, " (");
    if (e->json || !sp) {
        em_str(e, "site", name);
        return;
    }
    em_key(e, "site");
    fprintf(e->out, "%.*s", (int)(sp - name), name);
    vt__text_token(e->out, sp + 1);
}

static const char *special_name(uint64_t code)
{
    switch (code) {
    case VT_CODE_FLUSH: return "FLUSH";
    case VT_CODE_MARKER: return "MARKER";
    case VT_CODE_STOPPED: return "STOPPED";
    default: return "SPECIAL";
    }
}

static void print_event(const vt_trace *t, uint32_t rank, const vt_event *ev, int json)
{
    em e = {stdout, json, 1};
    const vt_function *f = vt_trace_function(t, rank, ev->fn);
    const char *name = f ? f->name : special_name(ev->code);
    int64_t enter = vt_global_time(t, rank, ev->enter), exit_ = vt_global_time(t, rank, ev->exit);
    char id[48];
    if (ev->fn >= 0)
        snprintf(id, sizeof id, "%" PRIu32 ":%" PRIu64, rank, 2 * ev->callno + 1);
    else
        snprintf(id, sizeof id, "%" PRIu32 ":-", rank);
    if (json) {
        putchar('{');
        em_u64(&e, "rank", rank);
        if (ev->fn >= 0)
            em_str(&e, "event", id);
        else
            em_null(&e, "event");
        em_u64(&e, "index", ev->index);
        em_i64(&e, "enter", enter);
        em_i64(&e, "exit", exit_);
        em_str(&e, "name", name);
    } else {
        printf("%s %" PRId64 " %" PRId64 " ", id, enter, exit_);
        vt__text_token(stdout, name);
    }
    unsigned fl = ev->fields;
    if (fl & VT_F_COMM) {
        const vt_comm *c = vt_trace_comm(t, rank, ev->comm);
        em_id(&e, "comm", c ? c->id : 0);
    }
    if (fl & VT_F_NEWCOMM) {
        const vt_comm *c = vt_trace_comm(t, rank, ev->newcomm);
        if (c)
            em_id(&e, "newcomm", c->id);
        else
            em_null(&e, "newcomm");
    }
    if (fl & VT_F_PEER)
        em_i64(&e, "peer", ev->peer);
    if (fl & VT_F_TARGET)
        em_i64(&e, "target", ev->peer);
    if (fl & VT_F_TAG)
        em_i64(&e, "tag", ev->tag);
    if (fl & VT_F_BYTES)
        em_u64(&e, "bytes", ev->bytes);
    if (fl & VT_F_RPEER)
        em_i64(&e, "src", ev->rpeer);
    if (fl & VT_F_RTAG)
        em_i64(&e, "rtag", ev->rtag);
    if (fl & VT_F_RBYTES)
        em_u64(&e, "rbytes", ev->rbytes);
    if (fl & VT_F_ROOT)
        em_i64(&e, "root", ev->root);
    if (fl & VT_F_COLLSEQ)
        em_u64(&e, "seq", ev->collseq);
    if (fl & VT_F_REQUEST)
        em_u64(&e, "req", ev->request);
    if (fl & VT_F_MSG)
        em_u64(&e, "msg", ev->msg);
    if (fl & VT_F_FILE) {
        const vt_file *file = vt_trace_file(t, rank, ev->file);
        em_str(&e, "file", file ? file->name : "");
    }
    if (fl & VT_F_OFFSET)
        em_i64(&e, "offset", ev->offset);
    if (fl & VT_F_STARTED) {
        em_key(&e, "started");
        putchar('[');
        for (size_t i = 0; i < ev->nstarted; i++)
            printf("%s%" PRIu64, i ? "," : "", ev->started[i]);
        putchar(']');
    }
    if (fl & VT_F_DONE) {
        em_key(&e, "done");
        putchar('[');
        for (size_t i = 0; i < ev->ndone; i++) {
            const vt_completion *d = &ev->done[i];
            if (json)
                printf("%s{\"req\":%" PRIu64 ",\"peer\":%" PRId64 ",\"tag\":%" PRId64 ",\"bytes\":%" PRIu64
                       ",\"flags\":%" PRIu64 "}",
                       i ? "," : "", d->request, d->peer, d->tag, d->bytes, d->flags);
            else
                printf("%s%" PRIu64 ":%" PRId64 ":%" PRId64 ":%" PRIu64 ":%" PRIu64, i ? "," : "", d->request, d->peer,
                       d->tag, d->bytes, d->flags);
        }
        putchar(']');
    }
    if (ev->code == VT_CODE_MARKER) {
        em_u64(&e, "kind", ev->marker_kind);
        em_i64(&e, "value", ev->marker_value);
    } else if (ev->code == VT_CODE_STOPPED) {
        em_u64(&e, "reason", ev->stop_reason);
    }
    if (fl & VT_F_CALLSITE) {
        if (vt_trace_callsite(t, rank, ev->callsite))
            em_site(&e, vt_site_name(t, rank, ev->callsite));
    }
    if (json)
        putchar('}');
    else
        printf(" record=%" PRIu64, ev->index);
    putchar('\n');
}


/* A record of a reduced trace: RANK:SEQ ENTER EXIT KIND fn= ... record=INDEX */
static void print_rrec(const vt_trace *t, uint32_t rank, const vt_rrec *rr, int json)
{
    static const char *const kinds[] = {"?", "START", "CAND", "COMP", "NBCINIT", "END"};
    em e = {stdout, json, 1};
    int64_t enter = vt_global_time(t, rank, rr->enter), exit_ = vt_global_time(t, rank, rr->exit);
    char id[48];
    snprintf(id, sizeof id, "%" PRIu32 ":%" PRIu64, rank, rr->seq);
    if (json) {
        putchar('{');
        em_u64(&e, "rank", rank);
        em_str(&e, "event", id);
        em_u64(&e, "index", rr->index);
        em_i64(&e, "enter", enter);
        em_i64(&e, "exit", exit_);
        em_str(&e, "kind", kinds[rr->kind <= VT_RREC_END ? rr->kind : 0]);
        em_u64(&e, "seq", rr->seq);
    } else {
        printf("%s %" PRId64 " %" PRId64 " %s", id, enter, exit_, kinds[rr->kind <= VT_RREC_END ? rr->kind : 0]);
    }
    if (rr->fn >= 0) {
        const vt_function *f = vt_trace_function(t, rank, rr->fn);
        em_str(&e, "fn", f ? f->name : "?");
    }
    if (rr->kind == VT_RREC_COMP) {
        em_u64(&e, "flags", rr->flags);
        em_i64(&e, "rstar", vt_global_time(t, rank, rr->rstar));
        em_key(&e, "msgs");
        putchar('[');
        for (size_t i = 0; i < rr->nmsgs; i++) {
            const vt_rmsg *m = &rr->msgs[i];
            int64_t S = vt_global_time(t, m->src, m->S);
            if (json)
                printf("%s{\"src\":%u,\"send_seq\":%" PRIu64 ",\"S\":%" PRId64 ",\"bytes\":%" PRIu64 ",\"sync\":%d",
                       i ? "," : "", m->src, m->send_seq, S, m->bytes, m->sync);
            else
                printf("%s%u:%" PRIu64 ":%" PRId64 ":%" PRIu64 ":%s", i ? "," : "", m->src, m->send_seq, S, m->bytes,
                       m->sync ? "sync" : "eager");
            if (m->sync)
                printf(json ? ",\"post_seq\":%" PRIu64 ",\"P\":%" PRId64 : ":%" PRIu64 ":%" PRId64, m->post_seq,
                       vt_global_time(t, rank, m->P));
            if (json)
                putchar('}');
        }
        putchar(']');
        em_key(&e, "ssends");
        putchar('[');
        for (size_t i = 0; i < rr->nssends; i++) {
            const vt_rssend *x = &rr->ssends[i];
            printf(json ? "%s{\"dst\":%u,\"send_seq\":%" PRIu64 ",\"S\":%" PRId64 ",\"bytes\":%" PRIu64 "}"
                        : "%s%u:%" PRIu64 ":%" PRId64 ":%" PRIu64,
                   i ? "," : "", x->dst, x->send_seq, vt_global_time(t, rank, x->S), x->bytes);
        }
        putchar(']');
    }
    if (rr->ngates) {
        em_key(&e, "gates");
        putchar('[');
        for (size_t i = 0; i < rr->ngates; i++) {
            const vt_rgate *g = &rr->gates[i];
            printf(json ? "%s{\"comm\":\"0x%" PRIx64 "\",\"collseq\":%" PRIu64 ",\"members\":%u,\"nonblocking\":%d}"
                        : "%s0x%" PRIx64 ":%" PRIu64 ":%u:%d",
                   i ? "," : "", g->comm, g->collseq, g->nmembers, g->nonblocking);
        }
        putchar(']');
    }
    if (rr->callsite >= 0 && vt_trace_callsite(t, rank, rr->callsite))
        em_site(&e, vt_site_name(t, rank, rr->callsite));
    if (json)
        putchar('}');
    else
        printf(" record=%" PRIu64, rr->index);
    putchar('\n');
}

/* --rank R: only rank R. */
typedef struct one_rank {
    uint32_t rank;
    int one;
} one_rank;

static int rank_option(void *dest, const char *val, char *msg, size_t len)
{
    one_rank *sel = dest;
    if (vt__parse_u32(val, &sel->rank))
        return -1;
    sel->one = 1;
    return 0;
}

/* --event R:S: only rank R's record of event S (of the call ending it, for a burst). */
typedef struct one_event {
    uint64_t seq;
    uint32_t rank;
    int one;
} one_event;

static int event_option(void *dest, const char *val, char *msg, size_t len)
{
    one_event *sel = dest;
    char rank[16];
    const char *colon = strchr(val, ':');
    char *end;
    (void)msg, (void)len;
    if (!colon || colon == val || (size_t)(colon - val) >= sizeof rank || colon[1] < '0' || colon[1] > '9')
        return -1;
    memcpy(rank, val, (size_t)(colon - val));
    rank[colon - val] = '\0';
    if (vt__parse_u32(rank, &sel->rank))
        return -1;
    sel->seq = strtoull(colon + 1, &end, 10);
    if (*end)
        return -1;
    sel->one = 1;
    return 0;
}

static int wanted(const one_event *ev, uint64_t seq)
{
    return !ev->one || seq == ev->seq || (ev->seq % 2 == 0 && seq == ev->seq + 1);
}

int vt__cmd_dump(int argc, char **argv)
{
    int json = 0;
    one_rank sel = {0, 0};
    one_event evsel = {0, 0, 0};
    const char *dir = NULL;
    const vt__opt opts[] = {
        {NULL, "--json", VT_OPT_FLAG, .dest = &json},
        {NULL, "--rank", VT_OPT_CALL, .dest = &sel, .what = "a rank number", .flags = VT_OPT_EQ | VT_OPT_NEEDS,
         .call = rank_option},
        {NULL, "--event", VT_OPT_CALL, .dest = &evsel, .what = "an event id RANK:SEQ",
         .flags = VT_OPT_EQ | VT_OPT_NEEDS, .call = event_option},
        VT__OPT_DEBUG_DIR,
        {0},
    };
    const vt__args args = {.usage = vt__usage_dump, .opts = opts, .pos = {&dir}, .missing = "missing trace directory",
                           .extra = "more than one trace directory", .extra_plain = 1, .prefix = "dump: ",
                           .dashdash = 1};
    int go = vt__args_parse(&args, argc, argv);
    if (go != VT_ARGS_GO)
        return go;
    if (sel.one && evsel.one && sel.rank != evsel.rank)
        return vt__usage_error(vt__usage_dump, "dump: --rank %" PRIu32 " and --event %" PRIu32 ":%" PRIu64
                               " name different ranks", sel.rank, evsel.rank, evsel.seq);
    uint32_t rank = evsel.one ? evsel.rank : sel.rank;
    int one = sel.one || evsel.one;
    uint64_t shown = 0;

    vt_error err;
    vt_trace *t;
    if (vt_trace_open(dir, &t, &err))
        return vt__fail(&err);
    vt__note_incomplete(t);
    uint32_t nranks = vt_trace_nranks(t);
    if (one && rank >= nranks) {
        vt_symbols_reset(); /* its cache belongs to this trace */
        vt_trace_close(t);
        return vt__usage_error(vt__usage_dump, "dump: --rank %" PRIu32 ": the trace has %" PRIu32 " ranks", rank,
                               nranks);
    }
    int rc = VT_EXIT_OK;
    for (uint32_t r = one ? rank : 0; r < (one ? rank + 1 : nranks) && rc == VT_EXIT_OK; r++) {
        vt_cursor *c;
        vt_event ev;
        int got;
        if (vt_cursor_open(t, r, &c, &err)) {
            rc = vt__fail(&err);
            break;
        }
        if (vt_trace_rank(t, r)->reduced) {
            vt_rrec rr;
            while ((got = vt_cursor_next_reduced(c, &rr, &err)) == 1)
                if (wanted(&evsel, rr.seq) && ++shown)
                    print_rrec(t, r, &rr, json);
        } else {
            while ((got = vt_cursor_next(c, &ev, &err)) == 1)
                if ((!evsel.one || ev.fn >= 0) && wanted(&evsel, 2 * ev.callno + 1) && ++shown)
                    print_event(t, r, &ev, json);
        }
        if (got < 0)
            rc = vt__fail(&err);
        vt_cursor_close(c);
    }
    if (rc == VT_EXIT_OK && evsel.one && !shown) {
        fprintf(stderr, "vtrace: %s: event %" PRIu32 ":%" PRIu64 " is not in the trace\n", dir, evsel.rank, evsel.seq);
        rc = VT_EXIT_ERROR;
    }
    vt_symbols_reset(); /* its cache belongs to this trace */
    vt_trace_close(t);
    return rc;
}
