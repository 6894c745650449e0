/* What-if replay of a full trace (model.md §2, §3, §6), numeric, several scenarios at
 * once. Each rank is streamed with its own cursor; a rank advances until it needs a
 * value another rank has not produced yet (a sender's difference at a send, a
 * receiver's difference where it posted a synchronous receive, the members of a
 * collective), then the next rank runs. Values travel through slots that are freed once
 * read. Without a vt_matches, messages are matched in the same pass ("streaming
 * matching" below): one decoding of the records, and memory for the messages in flight
 * rather than for every message of the trace. */
#include "vt_config.h"
#include "analysis/replay_priv.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Streaming: reads every rank to its end (DRAIN) and reports the first unmatched send or
 * receive left in a FIFO, in (communicator, source, destination, tag) order, as
 * vt_trace_match does. 0 when there is none. */
static int stream_unmatched(replay *R, int drain)
{
    for (uint32_t r = 0; drain && r < R->nranks; r++) {
        int rc;
        while ((rc = vt__rp_more(R, &R->rs[r])) > 0)
            ;
        if (rc < 0)
            return -1;
    }
    size_t best = SIZE_MAX;
    for (size_t k = 0; k < R->kt.n; k++)
        if (R->kq[k].side && (best == SIZE_MAX || vt__key_less(&R->kt.k[k], &R->kt.k[best])))
            best = k;
    if (best == SIZE_MAX)
        return 0;
    const vt_match_key *k = &R->kt.k[best];
    int is_send = R->kq[best].side == 2;
    uint64_t index = is_send ? SE(&R->rs[k->src], R->kq[best].head)->index
                             : RV(&R->rs[k->dst], R->kq[best].head)->index;
    vt__match_err_unmatched(R->err, R->t, k, is_send, index);
    R->failed = 1;
    return -1;
}

/* Each rank's scenario events (RANK:SEQ items) in its rstate, in one pass over the
 * items: random scenarios name events of every rank, so a pass per rank would cost
 * ranks x items (4G steps at 64K ranks). */
static int rank_items(replay *R)
{
    size_t nevents = 0;
    for (size_t sc = 0; sc < R->nsc; sc++)
        for (size_t i = 0; i < R->sc[sc].nitems; i++) {
            const vt_shorten *it = &R->sc[sc].items[i];
            if (it->sel == VT_SEL_EVENT && it->rank >= 0 && it->rank < (int64_t)R->nranks) {
                R->rs[it->rank].nevitems++;
                nevents++;
            }
        }
    /* (none, the common case: no pass over the ranks, whose rstates' first touch, a
     * read then a write, would fault each page twice) */
    if (!nevents)
        return 0;
    for (uint32_t r = 0; r < R->nranks; r++) {
        rstate *s = &R->rs[r];
        if (!s->nevitems)
            continue;
        if (!(s->evitems = malloc(s->nevitems * sizeof *s->evitems))) {
            vt_error_set(R->err, "out of memory");
            return -1;
        }
        s->nevitems = 0;
    }
    for (size_t sc = 0; sc < R->nsc; sc++)
        for (size_t i = 0; i < R->sc[sc].nitems; i++) {
            vt_shorten *it = &R->sc[sc].items[i];
            if (it->sel == VT_SEL_EVENT && it->rank >= 0 && it->rank < (int64_t)R->nranks) {
                rstate *s = &R->rs[it->rank];
                s->evitems[s->nevitems++] = (struct evitem){it->seq, sc, it};
            }
        }
    return 0;
}

/* A scenario naming an event that is not there or not a candidate is an error. */
static int check_items(replay *R)
{
    for (size_t sc = 0; sc < R->nsc; sc++) {
        for (size_t i = 0; i < R->sc[sc].nitems; i++) {
            const vt_shorten *it = &R->sc[sc].items[i];
            if (it->sel == VT_SEL_EVENT && it->rank >= (int64_t)R->nranks) {
                vt_error_set(R->err,
                               "scenario '%s': event %" PRId64 ":%" PRIu64 " is not in the trace (it has %u ranks)",
                               R->sc[sc].text, it->rank, it->seq, R->nranks);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->seen && R->partial)
                continue; /* after the cut of an incomplete trace: it changes nothing replayed */
            if (it->sel == VT_SEL_EVENT && !it->seen && R->reduced) {
                vt_error_set(R->err,
                               "scenario '%s': event %" PRId64 ":%" PRIu64 " is not a candidate of this reduced trace "
                               "(which holds every candidate; the event is shorter than θ = %" PRId64
                               " ns, or not in the trace)",
                               R->sc[sc].text, it->rank, it->seq, R->p->theta);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->seen) {
                vt_error_set(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " is not in the trace (rank %" PRId64
                        " has events 0 to %" PRIu64 ")",
                        R->sc[sc].text, it->rank, it->seq, it->rank,
                        2 * R->rs[it->rank].ncalls - 1);
                return -1;
            }
            if (it->sel == VT_SEL_EVENT && !it->hits) {
                vt_error_set(R->err, "scenario '%s': event %" PRId64 ":%" PRIu64 " lasts %" PRId64
                        " ns, under the threshold θ = %" PRId64 " ns: it is not a candidate",
                        R->sc[sc].text, it->rank, it->seq, it->seen_dur, R->p->theta);
                return -1;
            }
            if (it->sel == VT_SEL_RANK && it->rank >= (int64_t)R->nranks) {
                vt_error_set(R->err, "scenario '%s': rank %" PRId64 " is not in the trace (it has %u ranks)",
                        R->sc[sc].text, it->rank, R->nranks);
                return -1;
            }
        }
    }
    return 0;
}

int vt_replay(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
              vt_replay_result *res, vt_error *err)
{
    return vt_replay_observe(t, m, p, sc, nsc, NULL, res, err);
}

/* The progress hook of this thread's replays (vt_replay_progress). */
static _Thread_local void (*progress_fn)(void *arg, uint64_t records);
static _Thread_local void *progress_arg;

void vt_replay_progress(void (*fn)(void *arg, uint64_t records), void *arg)
{
    progress_fn = fn;
    progress_arg = arg;
}

/* N zeroed elements of SIZE (a multiple of 64) from a line boundary; *mem is what to
 * free. (calloc: large arrays come zeroed from the system, untouched until used.) */
static void *zalloc64(size_t n, size_t size, void **mem)
{
    *mem = calloc((n ? n : 1) * size + 63, 1);
    return *mem ? (void *)(((uintptr_t)*mem + 63) & ~(uintptr_t)63) : NULL;
}

/* Below this many ranks their state fits in the caches in the sweep's order too, and
 * the wake-ups (replay_sched.c) only cost instructions (1024 ranks: +3.9%). */
#define RP_WAKE_MIN_RANKS 4096u

/* A turn's end after step ST (STEP_MOVED in an earlier step if MOVED). */
static inline __attribute__((always_inline)) int turn_end(int st, int moved, uint32_t *done)
{
    if (st == STEP_ERROR)
        return -1;
    if (st == STEP_BLOCKED)
        return moved;
    ++*done; /* STEP_DONE */
    return 1;
}

/* A turn with a progress hook: each step counted. */
static __attribute__((noinline)) int turn_counted(replay *R, rstate *s, uint64_t *nsteps, uint32_t *done)
{
    for (int moved = 0;; moved = 1) {
        int st = R->reduced ? vt__rp_rstep(R, s) : vt__rp_step(R, s);
        if (st != STEP_MOVED)
            return turn_end(st, moved, done);
        if ((++*nsteps & 0xffff) == 0)
            progress_fn(progress_arg, *nsteps);
    }
}

/* Rank s's turn: its steps until it blocks or ends. 1 if it moved, 0 if not, -1 on an
 * error. (The hook's and the kind of trace's tests once a turn, not once a step.) */
static inline __attribute__((always_inline)) int turn(replay *R, rstate *s, uint64_t *nsteps, uint32_t *done)
{
    if (s->finished)
        return 0;
    if (__builtin_expect(progress_fn != NULL, 0))
        return turn_counted(R, s, nsteps, done);
    int st, moved = 0;
    if (R->reduced)
        while ((st = vt__rp_rstep(R, s)) == STEP_MOVED)
            moved = 1;
    else
        while ((st = vt__rp_step(R, s)) == STEP_MOVED)
            moved = 1;
    return turn_end(st, moved, done);
}

/* After rank r's turn (it MOVED or not): the ranks it woke, and the ranks they woke,
 * each in a turn of its own (replay_sched.c). -1 on an error. */
static __attribute__((noinline)) int run_woken(replay *R, uint32_t r, int moved, uint64_t *nsteps, uint32_t *done,
                                               int *progress)
{
    for (;;) {
        vt__rp_sched_after(R, r, moved, !R->rs[r].finished);
        R->wait_on = WAIT_NONE;
        if ((r = vt__rp_sched_pop(R)) == WAIT_NONE)
            return 0;
        if ((moved = turn(R, &R->rs[r], nsteps, done)) < 0)
            return -1;
        *progress |= moved;
    }
}

static int replay_run(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
                      const vt_observer *obs, const vt_par_comm *par, vt_replay_result *res, vt_error *err)
{
    void *rs_mem = NULL, *sms_mem = NULL;
    replay R = {.t = t, .m = m, .p = p, .sc = sc, .nsc = nsc, .obs = obs, .par = par, .res = res, .err = err};
    R.keys = vt_matches_keys(m, NULL);
    R.blocks = vt_blockpool_new();
    memset(res, 0, sizeof *res);
    R.nranks = vt_trace_nranks(t);
    /* without a vt_matches, a full trace is matched while it is replayed */
    R.stream = !m && !vt_trace_is_reduced(t);
    R.partial = (vt_trace_flags(t) & VT_GLOBAL_INCOMPLETE) != 0;
    vt__keytab_init(&R.kt);
    res->nscen = nsc;
    res->nranks = R.nranks;
    res->ends = calloc(nsc * R.nranks + 1, sizeof(int64_t));
    res->total = calloc(nsc + 1, sizeof(int64_t));
    res->measured = calloc(R.nranks + 1, sizeof(int64_t));
    /* (line-aligned: a rank's hot fields in as few lines as they fill) */
    R.rs = zalloc64(R.nranks, sizeof(rstate), &rs_mem);
    if (R.stream)
        R.sms = zalloc64(R.nranks, sizeof *R.sms, &sms_mem);
    R.dall = calloc((size_t)R.nranks * nsc + 1, sizeof(int64_t));
    R.delta = calloc(nsc + 1, sizeof(int64_t));
    R.tmp = calloc(nsc + 1, sizeof(int64_t));
    R.dbefore = calloc(nsc + 1, sizeof(int64_t));
    int rc = -1;
    if (!res->ends || !res->total || !res->measured || !R.rs || (R.stream && !R.sms) || !R.dall || !R.delta || !R.tmp || !R.dbefore) {
        vt_error_set(err, "out of memory");
        goto setup;
    }
    if (par && vt__rp_par_init(&R))
        goto setup;
    for (size_t s = 0; s < nsc; s++) {
        for (size_t i = 0; i < sc[s].nitems; i++) {
            sc[s].items[i].hits = 0;
            sc[s].items[i].seen = 0;
        }
    }
    if (vt__rp_plan_items(&R))
        goto setup;
    if (rank_items(&R))
        goto setup;
    for (uint32_t r = 0; r < R.nranks; r++)
        if (vt__rp_setup_rank(&R, &R.rs[r], r))
            goto setup;
    /* A scaled trace (VTRACE_PERIODIC) lacks the records of repeated iterations. */
    for (uint32_t r = 0; r < R.nranks; r++) {
        if (vt_trace_rank(t, r)->flags & VT_RANK_SCALED) {
            vt_error_set(err, "%s: rank %u's trace was scaled by VTRACE_PERIODIC (records of repeated iterations "
                           "were not written): predictions from it would be wrong; trace the run again without "
                           "VTRACE_PERIODIC (VTRACE_PERIODIC=0 marks iterations and keeps every record)",
                           vt_trace_rank(t, r)->path, r);
            goto setup;
        }
    }
    R.reduced = vt_trace_is_reduced(t);
    if (!par && R.reduced && vt__rp_reduced_prepass(&R))
        goto setup;
    rc = 0;
setup:
    /* (parallel: every process learns whether every one is ready) */
    if (par) {
        int64_t bad = rc != 0;
        if (par->sum(par->arg, &bad, 1) || bad) {
            rc = -1;
            goto out;
        }
    }
    if (rc)
        goto out;
    rc = -1;
    /* (in parallel the prepass exchanges what each process's ranks read: after the
     * setup, on every process; -1 on every one when one failed) */
    if (par && R.reduced && vt__rp_reduced_prepass(&R))
        goto out;
    if (par) {
        if (vt__rp_par_loop(&R))
            goto out;
        vt__rp_plan_fold_hits(&R);
        if (vt__rp_par_gather(&R))
            goto out;
        rc = check_items(&R);
        goto out;
    }
    uint32_t done = 0;
    uint64_t nsteps = 0;
    /* (an observer sees the records in the order the ranks take turns: the sweep's) */
    if (!obs && R.nranks >= RP_WAKE_MIN_RANKS && vt__rp_sched_init(&R))
        goto out;
    while (done < R.nranks) {
        int progress = 0;
        for (uint32_t r = 0; r < R.nranks; r++) {
            int moved = turn(&R, &R.rs[r], &nsteps, &done);
            if (moved < 0)
                goto out;
            progress |= moved;
            if (R.sched && run_woken(&R, r, moved, &nsteps, &done, &progress))
                goto out;
        }
        if (!progress && R.partial) {
            vt__rp_stop_at_cut(&R);
            break;
        }
        if (!progress && R.stream && stream_unmatched(&R, 1))
            goto out;
        if (!progress) {
            char where[1024];
            size_t off = 0;
            for (uint32_t r = 0; r < R.nranks && off < sizeof where - 100; r++) {
                rstate *s = &R.rs[r];
                if (!s->finished)
                    off += (size_t)snprintf(where + off, sizeof where - off, "%s rank %u at record %" PRIu64 " (%s)",
                                            off ? "," : "", r, s->record->index,
                                            s->record->fn >= 0 ? vt__rp_fname(&R, r, s->record->fn) : "special");
            }
            vt_error_set(err, "%s: the replay cannot order this trace: every unfinished rank waits for another:%s",
                    vt_trace_dir(t), where);
            goto out;
        }
    }
    if (R.stream && !R.partial && stream_unmatched(&R, 1))
        goto out;
    if (R.stream && !R.partial && !par) {
        if (!(res->sends = calloc(R.nranks + 1, sizeof *res->sends))) {
            vt_error_set(err, "out of memory");
            goto out;
        }
        for (uint32_t r = 0; r < R.nranks; r++)
            res->sends[r] = R.rs[r].nsends;
    }
    /* (the ranks of an incomplete trace with no record readable are left out: their
     * ends are the start) */
    int have_start = 0;
    for (uint32_t r = 0; r < R.nranks; r++) {
        const rstate *s = &R.rs[r];
        if (s->started && (!have_start || s->first_enter < res->start)) {
            res->start = s->first_enter;
            have_start = 1;
        }
    }
    for (uint32_t r = 0; r < R.nranks; r++) {
        rstate *s = &R.rs[r];
        if (!s->started) {
            s->last_exit = res->start;
            for (size_t k = 0; k < nsc; k++)
                s->d[k] = 0;
        }
        res->measured[r] = s->last_exit;
        for (size_t k = 0; k < nsc; k++) {
            int64_t e = s->last_exit - s->d[k];
            res->ends[k * R.nranks + r] = e;
            if (r == 0 || e > res->total[k])
                res->total[k] = e;
        }
    }
    vt__rp_plan_fold_hits(&R);
    rc = check_items(&R);
out:
    vt__rp_sched_free(&R);
    if (par)
        vt__rp_par_free(&R);
    for (uint32_t r = 0; R.rs && r < R.nranks; r++)
        vt__rp_free_rank(&R, &R.rs[r]);
    vt_blockpool_destroy(R.blocks);
    vt__rp_ra_free(&R);
    for (size_t g = 0; g < R.ngates; g++) {
        free(R.gates[g]->T);
        free(R.gates[g]->D);
        free(R.gates[g]->base);
        free(R.gates[g]->mrank);
        free(R.gates[g]->mseq);
        free(R.gates[g]);
    }
    for (size_t i = 0; i < R.nftabs; i++)
        vt__rp_free_ftab(&R.ftabs[i]);
    free(R.ftabs);
    free(R.gates);
    free(R.freegates);
    free(R.gate_of);
    free(R.slotmem);
    free(R.freeslots);
    free(R.used_reqs);
    vt__rp_plan_free(&R.plan);
    free(rs_mem);
    free(sms_mem);
    free(R.dall);
    free(R.delta);
    free(R.tmp);
    free(R.cons);
    free(R.used);
    free(R.used_gates);
    free(R.ocons);
    free(R.members);
    free(R.slotext);
    free(R.dbefore);
    free(R.probed_by);
    vt__rp_map_free(&R.pub);
    vt__rp_map_free(&R.syncinfo);
    free(R.sinfo);
    vt__keytab_free(&R.kt);
    free(R.kq);
    free(R.used_sends);
    if (rc)
        vt_replay_result_free(res);
    return rc;
}

int vt_replay_params(const vt_trace *t, vt_model_params *p, vt_error *err)
{
    char msg[256];
    vt_model_defaults(p);
    if (vt_model_params_parse(p, vt_trace_config(t), msg, sizeof msg))
        return vt_trace_config_error(t, err, "%s", msg);
    return 0;
}

int vt_replay_observe(const vt_trace *t, const vt_matches *m, const vt_model_params *p, vt_scenario *sc, size_t nsc,
                      const vt_observer *obs, vt_replay_result *res, vt_error *err)
{
    return replay_run(t, m, p, sc, nsc, obs, NULL, res, err);
}

int vt_replay_par_observe(const vt_trace *t, const vt_model_params *p, vt_scenario *sc, size_t nsc,
                          const vt_observer *obs, const vt_par_comm *pc, vt_replay_result *res, vt_error *err)
{
    /* a reduced trace with an observer that forwards to process 0: not yet in parallel
     * (every process knows it: the same answer everywhere); one that keeps its ranks'
     * events where they are (critical-path's, reduce's) runs, and so does an incomplete
     * trace: when no process moves, each stops its ranks at the cut (vt__rp_par_loop) */
    if (vt_trace_is_reduced(t) && obs && obs->take) {
        memset(res, 0, sizeof *res);
        return vt_error_set(err, "%s: this reduced trace is not replayed in parallel", vt_trace_dir(t));
    }
    return replay_run(t, NULL, p, sc, nsc, obs, pc, res, err);
}

int vt_replay_par(const vt_trace *t, const vt_model_params *p, vt_scenario *sc, size_t nsc, const vt_par_comm *pc,
                  vt_replay_result *res, vt_error *err)
{
    if (vt_replay_par_observe(t, p, sc, nsc, NULL, pc, res, err) == 0)
        return 0;
    /* Not finished in parallel (an error in the trace): process 0 replays alone,
     * serially, and its answer or error is the serial one. */
    int64_t v = 0;
    int rc = -1;
    memset(res, 0, sizeof *res);
    err->msg[0] = 0;
    if (pc->me == 0) {
        rc = vt_replay(t, NULL, p, sc, nsc, res, err);
        v = rc != 0;
    }
    if (pc->sum(pc->arg, &v, 1))
        v = 1;
    return pc->me == 0 ? rc : v ? -1 : 0;
}

void vt_replay_result_free(vt_replay_result *res)
{
    free(res->ends);
    free(res->total);
    free(res->measured);
    free(res->sends);
    res->ends = res->total = res->measured = NULL;
    res->sends = NULL;
}

/* A reduced trace records every candidate: CAND records, and COMP records flagged so. */
int vt_replay_candidates(const vt_trace *t, const vt_model_params *p, vt_candidate_fn fn, void *arg, vt_error *err)
{
    if (vt_trace_is_reduced(t))
        return vt__rp_reduced_candidates(t, fn, arg, err);
    for (uint32_t r = 0; r < vt_trace_nranks(t); r++) {
        vt_cursor *c;
        if (vt_cursor_open(t, r, &c, err))
            return -1;
        vt_cursor_fast(c);
        vt_event ev;
        int rc;
        int64_t prev = 0;
        while ((rc = vt_cursor_next(c, &ev, err)) == 1) {
            if (ev.fn < 0)
                continue;
            int64_t enter = vt_global_time(t, r, ev.enter), exit = vt_global_time(t, r, ev.exit);
            if (ev.callno == 0)
                prev = enter;
            /* damaged times can be 2^63 ns or more apart: an error, not a wrapped length */
            int64_t burst, call;
            if (__builtin_sub_overflow(enter, prev, &burst) || __builtin_sub_overflow(exit, enter, &call)) {
                vt_cursor_close(c);
                return vt_error_set(err, "%s: offset %" PRIu64 ": record %" PRIu64 ": expected the call's enter "
                                    "and exit times less than 2^63 ns from the previous exit, found %" PRId64
                                    " ns, %" PRId64 " ns and %" PRId64 " ns",
                                    vt_trace_rank(t, r)->path, ev.block_offset, ev.index, prev, enter, exit);
            }
            if (burst >= p->theta)
                fn(arg, r, 2 * ev.callno, burst, NULL, ev.callsite);
            if (p->cand_calls && call >= p->theta) {
                const vt_function *f = vt_trace_function(t, r, ev.fn);
                fn(arg, r, 2 * ev.callno + 1, call, f ? f->name : "?", ev.callsite);
            }
            prev = exit;
        }
        vt_cursor_close(c);
        if (rc < 0)
            return -1;
    }
    return 0;
}

