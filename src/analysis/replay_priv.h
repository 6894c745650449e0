/* Internals of the what-if replay shared by its files, each calling only those listed
 * before it: replay_core.c (maps, slots, gates, one event applied), replay_stream.c
 * (matching while replaying), replay_full.c (the records of a full trace),
 * replay_reduced.c (reduced traces), replay.c (the main loop and the API). Not an API. */
#ifndef VT_REPLAY_PRIV_H
#define VT_REPLAY_PRIV_H

#include "analysis/replay.h"
#include "util/blockpool.h"
#include "util/codec.h"
#include "format/match_keys.h"

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ slots and maps */

/* A value one rank publishes for another: a ready time (T), the receiving call's exit
 * (E, synchronous posts) and one difference per scenario. Slots live in one pool, each
 * with its nsc differences after it (one line with one scenario: a receiver reads
 * both), at a line boundary (no allocation per message, vt__rp_slot), and exist only
 * between the record that fills them and the last reader: a rank finds the slot of a
 * send or receive position through a small per-rank map. */
typedef struct slot {
    /* (what a receiver reads and release_used, first) */
    int64_t T;
    uint64_t seq;       /* model sequence number of the call that filled it */
    uint64_t bytes;     /* a send's message size (its receiver need not read the send entry) */
    uint32_t uses;      /* readers left before it is freed */
    uint32_t rank;      /* owner, and which of its maps names it */
    uint32_t pos;
    uint16_t post;      /* 1: a receive's posting, 0: a send */
    uint16_t held;      /* a send's, read through its receiver's entry (rx.slot, XF_HELD): its
                         * sender's entry may be gone when it is freed */
    int64_t E;
    int64_t Tloc;       /* T on the owner's clock */
    int64_t d[];        /* nsc */
} slot;

/* u32 position -> u32 slot (open addressing, backward-shift deletion). */
typedef struct posmap {
    uint64_t *e;        /* pos + 1 << 32 | slot; 0 empty */
    size_t cap, n;
} posmap;

typedef struct gate {
    uint64_t comm, seq;
    uint32_t need, arrived, left;
    uint32_t gen;       /* reuse count of this pool entry (ids name a generation) */
    int live, complete;
    int64_t M;
    int64_t *T, *D;     /* need entries; need x nsc */
    uint32_t *mrank;    /* need entries: who arrived, with which call */
    uint64_t *mseq;
    size_t capneed;
    int64_t *base;      /* nsc, when complete */
} gate;

/* u64 -> u64 (open addressing, backward-shift deletion); a key and its value side by
 * side (one line per probe). */
typedef struct u64map {
    struct u64ent { uint64_t k, v; } *e;   /* k: key + 1, 0 empty */
    size_t cap, n;
} u64map;

#define SLOT_NONE UINT32_MAX

/* Receives posted and not yet completed, by the record that completes them. */
typedef struct pend {
    uint64_t done;
    uint32_t pos;
} pend;

typedef struct heap {
    pend *v;
    size_t n, cap;
} heap;

/* ------------------------------------------------------------------ scenario items
 *
 * A shortening of every kind as one formula, min(dur * ppm / 10^6, cap), the same
 * integer as vt_shorten's: elim is (10^6, none), ns (10^6, value), a percentage
 * (value, none). */
typedef struct shortening {
    int64_t ppm, cap;
} shortening;

typedef struct gitem {
    shortening f;
    size_t scen;
    vt_shorten *it;
} gitem;

/* The items of a selector kind in groups: group g is items[first[g], first[g + 1]). */
typedef struct item_groups {
    gitem *items;
    uint32_t *first;
    size_t ngroups;
} item_groups;

/* What a candidate event is matched against, so that its cost is the items that apply
 * to it, not every scenario's: with a few hundred scenarios of one rank, function or
 * site each (vtrace report) an event meets one. */
/* Scenarios up to which vt__rp_apply and slot_fill use a scalar loop (more, as vtrace
 * report's hundreds: vt_model_candidates' vector one, memcpy) */
#define VT_RP_FAST_NSC 8

typedef struct scen_plan {
    /* all: one per scenario when no scenario has two (dense, each scenario's delta
     * computed in one loop, no selector; their hits are the candidates, added at the
     * end), else a list */
    shortening *dense;        /* nsc, (0, INT64_MAX) for a scenario without one */
    vt_shorten **dense_it;    /* nsc, NULL none */
    int64_t dense_safe;       /* largest duration whose products with the ppms fit in 64 bits */
    int dense_plain;          /* no ppm < 0, no cap (no -N ns item) */
    int fast;                 /* dense and plain, a few scenarios, no other item, no observer: vt__rp_apply */
    item_groups all;          /* one group, when not dense */
    item_groups by_rank;      /* group r: the items restricted to rank r (rank:R, R/fn:, R/site:) */
    item_groups by_func;      /* fn:NAME of any rank, a group per name (sorted) */
    item_groups by_site;      /* site:NAME of any rank, a group per name */
    struct { const char *name; uint32_t group; } fcache[64];   /* name pointer -> by_func group + 1 */
} scen_plan;

/* ------------------------------------------------------------------ replay state */

enum { REQ_SEND = 1, REQ_ICOLL = 2 };

/* One rank's replay state. The fields every record reads or writes come first, in the
 * first cache lines of the struct (at 16K ranks and more each rank's state is out of
 * the caches when its turn comes: each line read is a miss); what the replay of a full
 * trace touches rarely or never, and reduced traces' state, come last. */
typedef struct rstate {
    /* (line 0: also what the replay of other ranks reads; rstates are allocated at a
     * line boundary, replay.rs) */
    _Alignas(64) uint32_t rank;
    uint8_t have, published, finished, done_ready, started;
    uint8_t kind;             /* the current record's enum vt_model_kind, and its FK_* (decided */
    uint8_t kflags;           /* once per function: ftab.fflags), set when it is read */
    uint8_t apply_fast;       /* plan.fast and no R:S item of this rank: vt__rp_apply's own path */
    uint8_t reqs_live;        /* reqs holds an entry (most ranks never enter one: its line unread) */
    uint8_t probed_live;      /* probed holds an entry (most ranks never probe: vt__rp_probed_get) */
    struct smatch *sm;        /* streaming matching (no vt_matches given) */
    /* Entry i is at rw + (i & rmask) * rstride (sw, smask, sstride): the vt_matches
     * arrays (mask all ones, stride the entry's size), or the streaming matcher's
     * windows: rings of line-sized entries, each a receive (send) with its matcher's
     * rx (sx) after it, so that a record that reads both touches one line (RV, RX). */
    vt_match_crecv *rw;
    vt_match_csend *sw;
    uint32_t rmask, smask;
    uint32_t rstride, sstride;
    int64_t genter, gexit;    /* global enter and exit of ev (line 1 from gexit on) */
    int64_t prev_exit, last_exit;
    int64_t *d;               /* nsc differences, in replay.dall */
    size_t nrecvs, nsends;    /* entries (streaming: positions up to which entries exist) */
    size_t send_ptr;
    size_t post_ptr;
    /* (line 2) */
    uint32_t *done;           /* receives the current record completes */
    size_t ndone, capdone;
    /* Per function (shared by ranks with the same function table, R->ftabs): */
    const enum vt_model_kind *fkind;
    const enum vt_model_kind *skind; /* vt_model_send_kind of each function */
    const uint8_t *fflags;    /* FK_* of each function */
    size_t nfuncs;
    heap pending;             /* posted receives by completing record (line 3 from its n on) */
    posmap ps;                /* live slots per receive (synchronous posts, and each posted
                               * receive's until its message is known not synchronous) */
    int64_t goff;
    int goff_ok;              /* global time = local + goff (vt_global_offset) */
    uint16_t knext;           /* keys kcache got (its next entry to replace: mod 8) */
    uint16_t khit;            /* and the one the last lookup found (mod 8) */
    uint32_t kcache[8];       /* message keys this rank used lately (ids + 1, 0 none; line 4
                               * from its third on) */
    uint64_t ncalls;          /* call records seen */
    vt_cursor *cur;
    const vt_rank *rk;
    const vt_event *record;   /* the current record: ev, or (streaming) the pool entry holding
                               * it (smatch.held), kept until the next record: not copied */
    /* (the fields every record of a halo exchange touches end here, in five lines; then
     * what records of some kinds read: probes, collectives, a rank's R:S items) */
    size_t probe_msg;         /* receive the current probe matched, SIZE_MAX none */
    uint64_t coll_gate;       /* gate id joined by the current record + 1, 0 none */
    int nbc_joined;           /* the current record initiated a non-blocking collective ... */
    uint64_t nbc_comm;        /* ... on this communicator */
    size_t nevitems, evptr;
    /* maps that most ranks never fill, each read only when its flag in line 0 says it
     * holds an entry */
    posmap probed;            /* receives whose completion was a probe (until completed) */
    u64map reqs;              /* request id -> kind << 56 | position or gate id */
    u64map tmpl;              /* request ids of persistent send templates */
    const char *const *fname; /* each function's name */
    int64_t first_enter;
    vt_event ev;              /* (without streaming) */
    /* ---- rarely touched */
    posmap ss;                /* live slots per send (without streaming: with it, in the window) */
    const vt_match_crecv *recvs;
    const vt_match_csend *sends;
    uint32_t *exc;            /* receives posted before their index (by a matched probe), by posting */
    size_t nexc;
    /* Scenario items naming events of this rank, sorted by seq. */
    struct evitem { uint64_t seq; size_t scen; vt_shorten *it; } *evitems;
    /* Reduced traces: the current record, and the sequence numbers whose difference
     * another record reads (a send, a synchronous receive's posting), sorted, with
     * their readers. */
    vt_rrec rr;
    uint64_t gap_seq;         /* the first sequence number after the last record */
    uint64_t *needs;
    uint32_t *needcnt;
    size_t nneeds, needptr;
} rstate;

/* What a record of a function needs of vt__rp_step besides its sends and receives, decided
 * once per function from its kind (ftab.fflags): a record skips each part it does not
 * need with one test of a bit. */
enum {
    FK_TMPL = 1,      /* a persistent send's *_init: its request names a template */
    FK_ISEND = 2,     /* Isend, Issend, Ibsend: its request completes the send */
    FK_SYNCSEND = 4,  /* Send, Ssend, Sendrecv: may wait for a synchronous message's receiver */
    FK_RECVDONE = 8,  /* not a probe nor local: completes the receives due at its record */
    FK_COMPL = 16,    /* Wait/Test: completes requests */
    FK_START = 32,    /* Start/Startall */
    FK_PROBE = 64,
    FK_GATE = 128,    /* a collective, blocking or not */
};

/* What the replay derives from a function table, made once per distinct table. */
typedef struct ftab {
    const vt_function *funcs;
    size_t n;
    enum vt_model_kind *fkind, *skind;
    uint8_t *kinds, *inits, *fflags;
    const char **fname;
} ftab;

typedef struct replay {
    const vt_trace *t;
    const vt_matches *m;
    const vt_match_key *keys;
    const vt_model_params *p;
    vt_scenario *sc;
    size_t nsc;
    uint32_t nranks;
    rstate *rs;
    int64_t *dall;            /* every rank's differences: rank r's nsc at dall + r * nsc */
    struct smatch *sms;       /* every rank's streaming matching (rstate.sm) */
    ftab *ftabs;
    size_t nftabs;
    unsigned char *slotmem;   /* pool: slot i at i * slotsz (vt__rp_slot) */
    size_t slotsz;            /* sizeof(slot) and nsc differences, in whole lines */
    uint32_t *freeslots;
    size_t nslots, capslots, nfree;
    gate **gates;             /* pool; gate id = (gen & 0xffffff) << 32 | index */
    size_t ngates, capgates;
    uint32_t *freegates;
    size_t nfreegates;
    uint32_t *gate_of;        /* live gates by (comm, seq): index + 1, 0 empty */
    size_t capgate_of, ngate_of;
    scen_plan plan;           /* the selectors of every scenario but R:S items (evitems) */
    int64_t *delta;           /* nsc scratch */
    vt_contrib *cons;
    size_t ncons, capcons;
    /* With an observer: who each contributor is (parallel to cons), and scratch. */
    const vt_observer *obs;
    vt_obs_con *ocons;
    size_t capocons;
    vt_obs_member *members;
    size_t nmembers, capmembers;
    uint8_t *slotext;         /* obs->ext_size bytes per slot */
    int64_t *dbefore;         /* nsc */
    uint64_t *probed_by;
    size_t nprobed_by, capprobed_by;
    uint64_t step_msgs, step_viol;   /* of the record being processed (it may block) */
    int64_t *tmp;
    /* What the record being processed read: released once it is applied. */
    uint32_t *used;
    size_t nused, capused;
    uint64_t *used_gates;
    size_t nused_gates, capused_gates;
    uint64_t *used_reqs;      /* request entries it completed */
    size_t nused_reqs, capused_reqs;
    vt_replay_result *res;
    vt_error *err;
    int failed;               /* err is set (a trace error found while matching) */
    int partial;              /* the trace is incomplete: replay up to its cut */
    /* Streaming matching: message keys, and per key the entries waiting for their other
     * end (receives or sends, in order, linked through their rx/sx.next) */
    int stream;
    vt_keytab kt;             /* the message keys (format/match_keys.h) */
    struct kq {               /* per key: its ends, and the entries waiting (one record: one cache line) */
        uint32_t head, tail;
        uint32_t src, dst;
        uint32_t side;        /* 0 none waiting, 1 receives, 2 sends */
    } *kq;
    size_t capkq;             /* keys kq has room for */
    uint64_t *used_sends;     /* rank << 32 | send position read by the record being processed */
    size_t nused_sends, capused_sends;
    /* The records read ahead, of every rank (smatch.buf names them): one pool, in chunks
     * of RA_CHUNK (they do not move), its free entries reused the last freed first. A
     * rank mostly replays the records it read ahead in the same turn: at many ranks the
     * entry it decodes into is one the rank before it just let go, still in the caches,
     * where entries of its own would be out of them since its last turn. */
    struct brec **ra;         /* the chunks */
    size_t nra, capra;
    struct brec **rafree;     /* room for every entry */
    size_t nrafree, caprafree;
    /* Reduced traces */
    int reduced;
    u64map pub;               /* rank << 40 | seq -> slot: published differences */
    u64map syncinfo;          /* sender << 40 | send seq -> index in sinfo */
    struct sinfo { uint32_t dst; uint64_t post_seq; int64_t P, E; } *sinfo;   /* global P, E */
    size_t nsinfo, capsinfo;
    /* Parallel replay (replay_par.c; NULL: serial). This process steps ranks [lo, hi);
     * the rstates of the others are proxies: their windows and slots hold what their
     * processes sent (replay_wire.c). */
    const vt_par_comm *par;
    uint32_t lo, hi;
    struct wbuf { uint8_t *b; size_t n, cap; } *out;   /* per process: the set being filled */
    struct wbuf *outsets;     /* two sets of nproc: one is sent while the other fills */
    uint64_t activity;        /* values sent or received, records read ahead on request */
    u64map commloc;           /* communicator id -> members owned here + 1 */
    uint32_t *stamp;          /* per process, to list a communicator's processes once */
    uint32_t nstamp;
    vt_blockpool *blocks;     /* the ranks' windows' rings, records read ahead (NULL: malloc's) */
    /* Serial scheduling (replay_sched.c): the rank a step that blocked waits for
     * (WAIT_NONE: unknown), and the ranks waiting for each rank. */
    uint32_t wait_on;
    struct vt_rp_sched *sched;
} replay;

#define WAIT_NONE UINT32_MAX

int vt__rp_sched_init(replay *R);
void vt__rp_sched_free(replay *R);
void vt__rp_sched_after(replay *R, uint32_t r, int moved, int blocked);
uint32_t vt__rp_sched_pop(replay *R);

/* A step blocks (returns 1) until RANK makes the send or posting it waits for (noted
 * for the serial loop's wake-ups, and only when it makes them). */
static inline int vt__rp_blocked_on(replay *R, uint32_t rank)
{
    if (R->sched)
        R->wait_on = rank;
    return 1;
}

/* The process that replays rank r (blocks of ranks), and whether it is this one. */
static inline uint32_t vt__rp_owner(const replay *R, uint32_t r)
{
    return vt_replay_par_owner(R->par, R->nranks, r);
}
static inline int vt__rp_mine(const replay *R, uint32_t r) { return !R->par || (r >= R->lo && r < R->hi); }


/* ------------------------------------------------------------------ streaming matching
 *
 * Without a vt_matches, the replay matches messages itself, in its one pass over the
 * records (match.c's rules, the same result): each rank's records go through match()
 * when they are decoded, which adds that rank's sends (in call order) and receives (in
 * record order) to two rings, its windows, with the same fields as the compact arrays
 * of vt_trace_match. A send is paired when it is released (once it is known not to be
 * cancelled: at its completion for one with a request), a receive when it is released
 * (once it and every receive posted before it on its rank have a source and tag: at
 * the record for a blocking one, at its completion for a nonblocking or persistent one,
 * at the MPI_Mprobe for a matched one); per key, the k-th released send meets the k-th
 * released receive (the FIFOs of R->kq_*, holding only unpaired entries).
 *
 * What the replay reads of an entry is there when it reads it: when it posts a receive
 * it needs the receive's completing record (the order of the pending heap, the exit E
 * of a synchronous posting) and when it makes a send whether it was cancelled; a rank's
 * matcher then reads ahead on that rank (more()), keeping the records it read in a
 * buffer that the replay consumes before decoding further. A probe looks for its
 * message among the receives posted from it on (reading ahead until one fits). Entries
 * leave their windows once the replay is done with them (a receive at its completion, a
 * send once received and, when synchronous, completed), so memory follows the messages
 * in flight and the reading ahead, not the trace length. Unmatched entries are what is
 * left in the FIFOs: the errors are vt_trace_match's. */

/* The kinds of calls (K_*), of requests in flight (A_*) and the keys are match.c's
 * (format/match_keys.h). */
#define RQ_PH (UINT64_C(1) << 63)   /* posting queue: an MPI_Mprobe's receive, not read yet */
#define RQ_DROP UINT64_MAX          /* ... that never came */

#define XF_DONE 1u    /* receive: its completing record is known */
#define XF_RET 2u     /* the replay is done with it */
#define XF_RES 4u     /* send: whether it was cancelled is known */
#define XF_REL 8u     /* receive: released (in its key's FIFO, or paired) */
#define XF_SHIP 16u   /* parallel: sent to the other end's process (a send; a receive's posting) */
#define XF_SYNC 32u   /* send: its message is synchronous (vt_model_is_sync), kept here so that its
                       * receiver need not read the sender's function table; receive: the
                       * same, with XF_HELD */
#define XF_HELD 64u   /* receive: paired once its send's slot was filled, it holds the slot
                       * (rx.slot) and XF_SYNC, and the send entry was let go: the receiver
                       * reads nothing of its sender's state (cold at many ranks) */

typedef struct rx {
    uint64_t comm;    /* communicator id of a pending nonblocking receive */
    uint32_t next;    /* key FIFO */
    uint32_t flags;
    uint32_t src;     /* its sender, once its key is known (the receiver reads no key table) */
    uint32_t slot;    /* its send's slot, with XF_HELD */
} rx;

typedef struct sx {
    uint32_t next;
    uint16_t flags;
    uint16_t refs;    /* readers left: the receiver, and the sender's completion when synchronous */
    uint32_t slot;    /* its slot (rstate.ss without streaming), SLOT_NONE */
} sx;

#define RA_CHUNK 256

typedef struct brec {
    /* (its lists' arrays, vt_cursor_take_lists: in the line of the event's first
     * fields, written anyway) */
    uint64_t *st;
    vt_completion *dn;
    size_t capst, capdn;
    uint32_t sfirst, rfirst;  /* window positions of its first send and receive entries (match:
                               * any it makes are from there on, rstate.send_ptr and post_ptr) */
    vt_event ev;
} brec;

typedef struct sprobe {
    uint64_t index, comm_id, bytes, rq;
    int64_t peer, tag;
} sprobe;

typedef struct stmpl {
    int recv;
    int64_t fn;
    uint64_t comm_id;
    int64_t peer, tag;
    uint64_t bytes;
} stmpl;

typedef struct smatch {
    /* what the replay of another rank reads too (its sends) and sm_trim, first (in
     * lines of their own: replay.sms; the alignment on slo alone, as it would apply to
     * each name of a declaration and put shi and srel on lines of their own) */
    _Alignas(64) uint64_t slo;
    uint64_t shi, srel;       /* srel: first send not released */
    size_t scap;              /* (the send window: rstate.sw) */
    int eof;
    int rdirty;               /* a receive was retired or released since sm_trim last looked
                               * (else its receive side has nothing to drop) */
    int wake;                 /* something sm_release stopped at may have changed since it ran:
                               * a send became resolved, a receive's key known, the posting
                               * queue's entry filled or dropped (else it has nothing to do) */
    unsigned nact;            /* (act's count, here so that act and active end in one line) */
    uint64_t rlo, rhi;
    size_t rcap;              /* (the receive window: rstate.rw) */
    uint64_t qlo, qrel, qhi;
    struct rqe { uint64_t e, post; } *rq;   /* receives in posting order, and their posting index */
    size_t qcap;
    struct brec **buf;        /* records read ahead: entries of replay.ra (a ring) */
    struct brec *held;        /* the entry of the current record (rstate.record), NULL none */
    size_t bcap;
    uint64_t blo, bhi;
    const uint8_t *kinds, *inits;
    /* request -> position << 2 | A_*: the first ACT_FEW in flight in act (a scan, no
     * hash: a rank has few requests in flight), the others in the map. What a turn
     * reads of the matcher ends with active.n, in five lines: act's middle line the only
     * one a turn writes without reading it first. */
    struct u64ent act[8];     /* (k: request + 1, as in the map) */
    u64map active;
    u64map templates;         /* request -> index in tmpls */
    stmpl *tmpls;
    size_t ntmpls, captmpls;
    u64map probes;            /* message id -> index in pr */
    sprobe *pr;
    size_t npr, cappr;
    uint32_t *prfree;
    size_t nprfree, capprfree;
    struct orph { uint64_t pos, req, comm; } *orph;
    size_t norph, caporph;
} smatch;

#define RV(s, i) ((vt_match_crecv *)((char *)(s)->rw + ((size_t)(i) & (s)->rmask) * (s)->rstride))
#define SE(s, i) ((vt_match_csend *)((char *)(s)->sw + ((size_t)(i) & (s)->smask) * (s)->sstride))
/* (streaming only) */
#define RX(s, i) ((rx *)(RV(s, i) + 1))
#define SX(s, i) ((sx *)(SE(s, i) + 1))
/* A window entry of the streaming matcher: one line. */
#define WIN_ENTRY 64
_Static_assert(sizeof(vt_match_crecv) + sizeof(rx) <= WIN_ENTRY && sizeof(vt_match_csend) + sizeof(sx) <= WIN_ENTRY,
               "a window entry is one line");

enum { STEP_DONE, STEP_MOVED, STEP_BLOCKED, STEP_ERROR };

#define PUB_KEY(rank, seq) ((uint64_t)(rank) << 40 | (seq))

/* replay_core.c: maps, slots, contributors, one event applied, gates (calls nothing below) */
int vt__rp_add_con_slow(replay *R, int64_t T, const int64_t *D, enum vt_con_kind kind, uint32_t rank, uint64_t seq,
                        vt_obs_con **oc);
int vt__rp_apply_event(replay *R, rstate *s, uint64_t seq, int64_t start, int64_t end, const int64_t *base, int64_t M,
                       const char *func, int64_t cs, enum vt_model_kind kind);
gate *vt__rp_gate_by_id(const replay *R, uint64_t id);
gate *vt__rp_gate_get(replay *R, uint64_t comm, uint64_t seq, uint32_t need, size_t *gi);
size_t vt__rp_gate_home(uint64_t comm, uint64_t seq, size_t cap);
uint64_t vt__rp_gate_id(const replay *R, size_t i);
void vt__rp_gate_join(replay *R, gate *g, int64_t T, const int64_t *D, uint32_t rank, uint64_t seq);
void vt__rp_gate_leave(replay *R, uint64_t id);
void vt__rp_map_free(u64map *m);
int vt__rp_map_grow(u64map *m);
void vt__rp_pm_del(posmap *m, uint32_t pos);
int vt__rp_pm_put(posmap *m, uint32_t pos, uint32_t val);
uint32_t vt__rp_slot_alloc(replay *R);
int vt__rp_add_gate_con(replay *R, const gate *g, int nonblocking);
void vt__rp_fix_members(replay *R);
int vt__rp_note_gate(replay *R, uint64_t id);

/* The u64map operations, inline: requests go through them at every nonblocking call and
 * its completion (the growth, rare, is not). */
static inline uint64_t vt__rp_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static inline int vt__rp_map_put(u64map *m, uint64_t k, uint64_t v)
{
    if ((m->n + 1) * 2 > m->cap && vt__rp_map_grow(m))
        return -1;
    k++;   /* 0 marks an empty slot */
    size_t mask = m->cap - 1, j = vt__rp_mix(k) & mask;
    while (m->e[j].k && m->e[j].k != k)
        j = (j + 1) & mask;
    if (!m->e[j].k)
        m->n++;
    m->e[j].k = k;
    m->e[j].v = v;
    return 0;
}

/* The entry of key k, added when absent (*fresh: 1, its value to set); NULL without
 * memory. A put that reads what it replaces: one probe. */
static inline struct u64ent *vt__rp_map_at(u64map *m, uint64_t k, int *fresh)
{
    if ((m->n + 1) * 2 > m->cap && vt__rp_map_grow(m))
        return NULL;
    k++;
    size_t mask = m->cap - 1, j = vt__rp_mix(k) & mask;
    while (m->e[j].k && m->e[j].k != k)
        j = (j + 1) & mask;
    *fresh = !m->e[j].k;
    if (*fresh) {
        m->e[j].k = k;
        m->n++;
    }
    return &m->e[j];
}

static inline size_t vt__rp_map_slot(const u64map *m, uint64_t k)
{
    if (!m->n)
        return SIZE_MAX;
    k++;
    size_t mask = m->cap - 1, j = vt__rp_mix(k) & mask;
    while (m->e[j].k) {
        if (m->e[j].k == k)
            return j;
        j = (j + 1) & mask;
    }
    return SIZE_MAX;
}

static inline int vt__rp_map_get(const u64map *m, uint64_t k, uint64_t *v)
{
    size_t j = vt__rp_map_slot(m, k);
    if (j == SIZE_MAX)
        return 0;
    *v = m->e[j].v;
    return 1;
}

/* Removes the entry at j (backward-shift deletion). */
static inline void vt__rp_map_del_at(u64map *m, size_t j)
{
    size_t mask = m->cap - 1;
    m->e[j].k = 0;
    m->n--;
    for (size_t i = (j + 1) & mask; m->e[i].k; i = (i + 1) & mask) {
        size_t home = vt__rp_mix(m->e[i].k) & mask;
        if (((i - home) & mask) >= ((i - j) & mask)) {
            m->e[j] = m->e[i];
            m->e[i].k = 0;
            j = i;
        }
    }
}

static inline void vt__rp_map_del(u64map *m, uint64_t k)
{
    size_t j = vt__rp_map_slot(m, k);
    if (j != SIZE_MAX)
        vt__rp_map_del_at(m, j);
}

/* get, then del: one probe. */
static inline int vt__rp_map_take(u64map *m, uint64_t k, uint64_t *v)
{
    size_t j = vt__rp_map_slot(m, k);
    if (j == SIZE_MAX)
        return 0;
    *v = m->e[j].v;
    vt__rp_map_del_at(m, j);
    return 1;
}

static inline uint32_t vt__rp_pm_get(const posmap *m, uint32_t pos)
{
    if (!m->n)
        return SLOT_NONE;
    uint64_t k = (uint64_t)pos + 1;
    for (size_t j = (size_t)vt__rp_mix(k) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        if (!m->e[j])
            return SLOT_NONE;
        if (m->e[j] >> 32 == k)
            return (uint32_t)m->e[j];
    }
}

/* The probe that completed receive pos (its call number), SLOT_NONE none: the map read
 * only when it holds an entry (s->probed_live), its line cold at many ranks. */
static inline uint32_t vt__rp_probed_get(const rstate *s, uint32_t pos)
{
    return __builtin_expect(s->probed_live, 0) ? vt__rp_pm_get(&s->probed, pos) : SLOT_NONE;
}

/* A contributor (T, D) of the record being processed; with an observer, who it is (*oc,
 * else NULL). Inline without an observer and with room: every message goes through it. */
static inline int vt__rp_add_con_obs(replay *R, int64_t T, const int64_t *D, enum vt_con_kind kind, uint32_t rank,
                                     uint64_t seq, vt_obs_con **oc)
{
    if (R->obs || R->ncons == R->capcons)
        return vt__rp_add_con_slow(R, T, D, kind, rank, seq, oc);
    R->cons[R->ncons].T = T;
    R->cons[R->ncons].D = D;
    R->ncons++;
    if (oc)
        *oc = NULL;
    return 0;
}

int vt__rp_grow_u32(uint32_t **v, size_t *cap);
int vt__rp_grow_u64(uint64_t **v, size_t *cap);

/* Every record goes through these: inline. */
static inline int vt__rp_push_u32(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
    if (*n == *cap && vt__rp_grow_u32(v, cap))
        return -1;
    (*v)[(*n)++] = x;
    return 0;
}

static inline int vt__rp_push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap && vt__rp_grow_u64(v, cap))
        return -1;
    (*v)[(*n)++] = x;
    return 0;
}

static inline slot *vt__rp_slot(const replay *R, uint32_t i) { return (slot *)(R->slotmem + (size_t)i * R->slotsz); }
static inline int64_t *vt__rp_slot_d(const replay *R, uint32_t i) { return vt__rp_slot(R, i)->d; }

static inline int vt__rp_note_used(replay *R, uint32_t sl)
{
    return vt__rp_push_u32(&R->used, &R->nused, &R->capused, sl);
}

static inline const char *vt__rp_fname(const replay *R, uint32_t rank, int64_t fn)
{
    const rstate *s = &R->rs[rank];
    if (fn >= 0 && (size_t)fn < s->nfuncs && s->fname)
        return s->fname[fn];
    const vt_function *f = vt_trace_function(R->t, rank, fn);
    return f ? f->name : "?";
}

/* Rank s's local time LOCAL on the global clock (s: the rank's state, not looked up). */
static inline int64_t vt__rp_gtime_at(const replay *R, const rstate *s, int64_t local)
{
    if (s->goff_ok)
        return (int64_t)((uint64_t)local + (uint64_t)s->goff);
    return vt_global_time(R->t, s->rank, local);
}

static inline int64_t vt__rp_gtime(const replay *R, uint32_t rank, int64_t local)
{
    return vt__rp_gtime_at(R, &R->rs[rank], local);
}

/* vt__rp_apply_event, inline for the common what-if (every record goes through it
 * twice): a plain all=-N% item per scenario (R->plan.fast), no observer, no R:S item
 * on this rank (s->apply_fast, decided once), a duration the products fit. The same integers as its path. fn:
 * the call's function, -1 for the computation burst before it (func NULL). */
static inline int vt__rp_apply(replay *R, rstate *s, uint64_t seq, int64_t start, int64_t end, const int64_t *base,
                               int64_t M, int64_t fn, int64_t cs, enum vt_model_kind kind)
{
    int64_t dur = end - start;
    /* (plan.fast implies no observer; dense_safe >= 0: one unsigned compare for both bounds) */
    if (!s->apply_fast || (uint64_t)dur > (uint64_t)R->plan.dense_safe)
        return vt__rp_apply_event(R, s, seq, start, end, base, M, fn < 0 ? NULL : vt__rp_fname(R, s->rank, fn), cs,
                                  kind);
    R->res->events++;
    int64_t *d = s->d;
    size_t nsc = R->nsc;
    if (dur < R->p->theta || (fn >= 0 && !R->p->cand_calls)) {
        if (base)
            for (size_t k = 0; k < nsc; k++)
                d[k] = base[k];
        return 0;
    }
    R->res->candidates++;
    const shortening *f = R->plan.dense;
    for (size_t k = 0; k < nsc; k++) {
        int64_t delta = (int64_t)((uint64_t)dur * (uint64_t)f[k].ppm / 1000000u);
        d[k] = base ? vt_model_candidate(base[k], delta, d[k], dur, 0) : d[k] + delta;
    }
    return 0;
}

int vt__rp_plan_items(replay *R);
void vt__rp_plan_free(scen_plan *P);
void vt__rp_plan_fold_hits(replay *R);

/* replay_wire.c: the parallel replay's messages out (calls replay_core.c only) */
enum { W_SEND = 1, W_POST, W_JOIN, W_SETTLE, W_OBS, W_PUB };
#define W_SEND_WORDS 13
/* With an observer that has ext: a remote send's ext follows its D as a byte count
 * and the bytes in whole words (vt_observer.ext_pack's, or ext as it is). */
static inline int vt__rp_ext_wire(const replay *R) { return R->obs && R->obs->ext_size; }
int vt__rp_ship_send(replay *R, rstate *s, size_t pos);
int vt__rp_ship_post(replay *R, rstate *s, size_t i);
int vt__rp_ship_join(replay *R, const vt_comm *c, uint64_t comm, uint64_t seq, uint32_t need, int64_t T,
                     const int64_t *D, uint32_t rank, uint64_t mseq);
int vt__rp_ship_settle(replay *R, uint32_t rank);
int vt__rp_ship_obs(replay *R);
int vt__rp_ship_pub(replay *R, uint32_t q, uint32_t rank, uint64_t seq, uint32_t uses, const int64_t *d);
int vt__rp_gate_local(replay *R, gate *g, const vt_comm *c);
int vt__rp_slot_new(replay *R, rstate *s, posmap *pm, uint32_t rank, uint32_t pos, int post, const int64_t *w,
                    const int64_t *d, const uint8_t *ext, size_t next, uint32_t uses);

/* replay_stream.c: matching while replaying (calls replay_core.c and replay_wire.c) */
int vt__rp_remote_send(replay *R, const int64_t *w, const int64_t *d, const uint8_t *ext, size_t next);
int vt__rp_drop_post(replay *R, rstate *s, size_t i);
int vt__rp_read_to_recv(replay *R, rstate *s, size_t i);
/* Receive i's source, tag and completing record known (streaming): read ahead on s
 * until they are (vt__rp_read_to_recv). 0, or -1 on an error. */
static inline int vt__rp_ensure_recv(replay *R, rstate *s, size_t i)
{
    if (RV(s, i)->key == KEY_PENDING || !(RX(s, i)->flags & XF_DONE))
        return vt__rp_read_to_recv(R, s, i);
    return 0;
}
int vt__rp_ensure_send(replay *R, rstate *s, size_t i);
int vt__rp_more(replay *R, rstate *s);
int vt__rp_next_record(replay *R, rstate *s);
int vt__rp_note_send(replay *R, uint32_t rank, uint32_t pos);
size_t vt__rp_probe_target_stream(replay *R, rstate *s);
int vt__rp_settle(replay *R, rstate *s);
int vt__rp_sm_err(replay *R, const char *path, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void vt__rp_sm_free(replay *R, rstate *s);
void vt__rp_ra_free(replay *R);
void vt__rp_hand_over(const replay *R, rstate *snd, uint32_t spos, rstate *rcv, uint32_t rpos);
void vt__rp_sm_trim(rstate *s);

/* replay_full.c: the records of a full trace (calls the files above) */
void vt__rp_free_ftab(ftab *f);
void vt__rp_free_rank(replay *R, rstate *s);
int vt__rp_setup_rank(replay *R, rstate *s, uint32_t r);
int vt__rp_step(replay *R, rstate *s);

void vt__rp_stop_at_cut(replay *R);

/* replay_par.c: the parallel replay's rounds (calls the files above) */
int vt__rp_par_init(replay *R);
int vt__rp_par_loop(replay *R);
int vt__rp_par_gather(replay *R);
void vt__rp_par_free(replay *R);

/* replay_reduced.c: reduced traces (calls replay_core.c only) */
int vt__rp_reduced_candidates(const vt_trace *t, vt_candidate_fn fn, void *arg, vt_error *err);
int vt__rp_reduced_prepass(replay *R);
int vt__rp_rstep(replay *R, rstate *s);
int vt__rp_remote_pub(replay *R, uint32_t rank, uint64_t seq, uint32_t uses, const int64_t *d);

#endif
