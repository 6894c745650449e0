/* EVENTS_COLS packing and unpacking (REDUCED_COLS: the same loops, the reduced records'
 * parts in rcols.c); see evcols.h and doc/format.md. */
#include "vt_config.h"
#include "format/evcols_priv.h"

static const char *const col_name[NCOLS] = {"codes", "sequence numbers", "call sites", "enter times", "durations",
                                            "times", "fields", "form"};


/* Writes the values V[0..n) as the fields of LETTERS. Returns 0, or -1 when the values
 * do not fit the letters (too few, too many, or no room). Signed fields were read as
 * their zigzag encoding, so every value is written as a uvar. */
static int write_fields(const char *letters, const uint64_t *v, size_t n, buf *out)
{
    size_t i = 0;
    for (const char *l = letters; *l; l++) {
        if (i >= n || put_u(out, v[i]))
            return -1;
        uint64_t k = v[i++];
        if (*l == 'R' || *l == 'k') {
            uint64_t more = k * (*l == 'R' ? 1 : 5);
            if (k > n || more > n - i)
                return -1;
            for (uint64_t j = 0; j < more; j++)
                if (put_u(out, v[i++]))
                    return -1;
        }
    }
    return i == n ? 0 : -1;
}

/* ------------------------------------------------------------------ packing, the common records */

/* The run time's flush packs every record of its buffer (issue 18): pack_rows takes the
 * records of a known call or special record at least FAST_MARGIN bytes before the
 * payload's end by a shorter way than the loop of pack() (whose record it hands back
 * otherwise: the same bytes, and the same errors); those of at most FAST_NF fields
 * without lists by the shortest. FAST_MARGIN covers such a record's varints of 10 bytes
 * at most and copy_fast's 16 bytes read from the last one's start. */
enum { FAST_NF = 12, FAST_MARGIN = 10 * (4 + FAST_NF) + 16, FAST_DESC = 512, FAST_LIST = 0xfe, FAST_SLOW = 0xff };

/* pack_rows' state kept from one call to the next in a block: DESC the fast_desc of
 * each code (0: not yet known), HINT the entry of the last record of each code modulo
 * 32, to check before the hash (all dropped when the table moves: CAP not its cap). */
typedef struct fast_state {
    uint8_t desc[FAST_DESC];
    last *hint[32];
    uint32_t cap;
} fast_state;

/* The fields count + 1 of CODE's layout; FAST_LIST, one with lists or more than
 * FAST_NF fields; FAST_SLOW, a code not known (pack() says so). */
static __attribute__((noinline)) uint8_t fast_desc(uint64_t code, const vt_evcols_funcs *fn)
{
    const char *letters = fields_of(code, fn);
    if (!letters)
        return FAST_SLOW;
    size_t n = strlen(letters);
    if (n > FAST_NF || strpbrk(letters, "Rk"))
        return FAST_LIST;
    return (uint8_t)(n + 1);
}

/* A uvar at Q with 10 bytes to read (a uvar is 10 bytes at most): get_field's value;
 * the end after it, NULL when it does not decode. */
static inline const uint8_t *get_u10(const uint8_t *q, uint64_t *v)
{
    return get_field(&q, q + 10, v) ? NULL : q;
}

/* NF uvars at Q (with 10 bytes to read for each) into V; NULL when one does not decode.
 * Fields of one byte each, mostly, come from one word. */
static inline __attribute__((always_inline)) const uint8_t *get_fields(const uint8_t *q, unsigned nf, uint64_t *v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (nf <= 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        uint64_t mine = nf == 8 ? ~(uint64_t)0 : ((uint64_t)1 << 8 * nf) - 1;
        if (!(w & mine & 0x8080808080808080u)) {
            _Pragma("GCC unroll 8")
            for (unsigned i = 0; i < nf; i++)
                v[i] = w >> 8 * i & 0xff;
            return q + nf;
        }
    }
#endif
    for (unsigned i = 0; i < nf && q; i++)
        q = get_u10(q, &v[i]);
    return q;
}

/* put_values and set_values for an entry LV, ST of as many values V[0..nf) (and not
 * seeded), into the fields column at W, which has room. Returns the new end. */
static inline __attribute__((always_inline)) uint8_t *put_same(unsigned nf, const uint64_t *v, uint64_t *lv,
                                                                uint64_t *st, uint8_t *w)
{
    uint64_t x = 0, d[FAST_NF];
    _Pragma("GCC unroll 12")
    for (unsigned i = 0; i < nf; i++) {
        d[i] = v[i] - lv[i] - st[i];
        x |= d[i];
        lv[i] = v[i];
    }
    if (!x) {
        *w++ = TAG_SAME;
        return w;
    }
    *w++ = TAG_DELTA;
    for (unsigned i = 0; i < nf; i++) {
        w = vt_put_svar(w, (int64_t)d[i]);
        st[i] += d[i];
    }
    return w;
}

/* The common counts of fields as constants: each its own loops, unrolled. */
#define BY_NF(nf, call)                                                                                                \
    switch (nf) {                                                                                                      \
    case 1: call(1); break;                                                                                            \
    case 2: call(2); break;                                                                                            \
    case 3: call(3); break;                                                                                            \
    case 4: call(4); break;                                                                                            \
    case 5: call(5); break;                                                                                            \
    case 6: call(6); break;                                                                                            \
    default: call(nf); break;                                                                                          \
    }

/* The bytes [s, e) of a uvar at W, which has room for 16 (and 16 bytes from S to read):
 * copied as one 16-byte move, the bytes past them written over next. Returns the new end. */
static inline uint8_t *copy_fast(uint8_t *w, const uint8_t *s, const uint8_t *e)
{
    memcpy(w, s, 16);
    return w + (e - s);
}

/* The entry shortcuts dropped when the table T moved (its cap changed). */
static inline void hints_follow(fast_state *fs, const lasts *t)
{
    if (fs->cap != t->cap) {
        memset(fs->hint, 0, sizeof fs->hint);
        fs->cap = t->cap;
    }
}

/* Packs records *R.. of NREC from *P into COL and T while they take the short way (A:
 * pack()'s values scratch). Returns 0 (then *P and *R are at the first record not
 * packed), or -1 without memory. */
static int pack_rows(const uint8_t **pp, const uint8_t *end, uint32_t *rp, uint32_t nrec, const vt_evcols_funcs *fn,
                     fast_state *fs, buf *col, lasts *t, vals *a)
{
    enum { ROOM = VT_UVAR_MAX + 6, FROOM = 1 + VT_UVAR_MAX * FAST_NF };
    static const int cols[4] = {COL_CODES, COL_ENTERS, COL_DURS, COL_SITES};
    const uint8_t *p = *pp;
    uint32_t r = *rp;
    uint8_t *desc = fs->desc;
    last **hint = fs->hint;
    hints_follow(fs, t);
    buf *f = &col[COL_FIELDS];
    int rc = 0;
    while (r < nrec && end - p >= FAST_MARGIN) {
        /* records this batch takes without a check of the columns' room: a record writes
         * at most 10 bytes into each (and 16 past its start) and FROOM into the fields */
        size_t batch = SIZE_MAX;
        for (int k = 0; k < 4; k++) {
            buf *b = &col[cols[k]];
            if (reserve(b, 4 * ROOM))
                goto out;
            size_t n = (b->cap - b->len - (ROOM - VT_UVAR_MAX)) / VT_UVAR_MAX;
            batch = n < batch ? n : batch;
        }
        if (reserve(f, 4 * FROOM))
            goto out;
        size_t fb = (f->cap - f->len) / FROOM;
        batch = fb < batch ? fb : batch;
        if (batch > nrec - r)
            batch = nrec - r;
        uint8_t *wc = col[COL_CODES].p + col[COL_CODES].len, *we = col[COL_ENTERS].p + col[COL_ENTERS].len,
                *wd = col[COL_DURS].p + col[COL_DURS].len, *ws = col[COL_SITES].p + col[COL_SITES].len,
                *wf = f->p + f->len;
        uint32_t stop = r + (uint32_t)batch;
        for (; r < stop && end - p >= FAST_MARGIN; r++) {
            uint64_t code, site = 0, u, v[FAST_NF];
            const uint8_t *q = get_u10(p, &code);
            if (!q || code >= FAST_DESC)
                break;
            unsigned nf = desc[code] - 1u; /* (0 not yet known: UINT_MAX) */
            if (nf > FAST_NF) {
                if (!desc[code])
                    desc[code] = fast_desc(code, fn);
                if (desc[code] == FAST_SLOW)
                    break;
                nf = desc[code] - 1u;
            }
            /* every varint read before any is copied: a record that does not decode is
             * left as it was, to pack() */
            const uint8_t *qe = get_u10(q, &u), *qd = qe ? get_u10(qe, &u) : NULL, *qs = qd;
            if (qd && code >= VT_CODE_FIRST_FN)
                qs = get_u10(qd, &site);
            if (!qs)
                break;
            if (nf > FAST_NF) {
                /* lists: read_fields and put_values as in pack(), whose writes may go past
                 * this batch's room: the batch is shortened to what is left */
                const uint8_t *qf = qs;
                a->n = 0;
                if (read_fields(fields_of(code, fn), &qf, end, a))
                    break;
                wc = copy_fast(wc, p, q);
                we = copy_fast(we, q, qe);
                wd = copy_fast(wd, qe, qd);
                ws = copy_fast(ws, qd, qs);
                p = qf;
                if (!a->n)
                    continue;
                f->len = (size_t)(wf - f->p);
                if (put_values(t, code, site, a, f)) {
                    rc = -1;
                    break;
                }
                wf = f->p + f->len;
                hints_follow(fs, t);
                size_t left = (f->cap - f->len) / FROOM;
                if (stop - r - 1 > left)
                    stop = r + 1 + (uint32_t)left;
                continue;
            }
            /* the entry first (none for a record without fields, as in pack()): the
             * fields read and predicted in one unrolled case of their count */
            last *l = NULL;
            if (nf) {
                l = hint[code & 31];
                if (!l || l->code != code || l->site != site) {
                    if (!(l = lasts_get(t, code, site))) {
                        rc = -1;
                        break;
                    }
                    hints_follow(fs, t);
                    hint[code & 31] = l;
                }
            }
            const uint8_t *qf = qs;
            int other = 0; /* values of another count than the entry's: put_values */
#define ROW(k)                                                                                                         \
    if (!(qf = get_fields(qs, k, v)))                                                                                  \
        goto bad;                                                                                                      \
    if (l->n == (k) && !l->seeded)                                                                                     \
        wf = put_same(k, v, l->v, l->step, wf);                                                                        \
    else                                                                                                               \
        other = 1;
            if (nf)
                BY_NF(nf, ROW)
#undef ROW
            wc = copy_fast(wc, p, q);
            we = copy_fast(we, q, qe);
            wd = copy_fast(wd, qe, qd);
            ws = copy_fast(ws, qd, qs);
            p = qf;
            if (other) {
                f->len = (size_t)(wf - f->p);
                if (put_values(t, code, site, &(const vals){v, nf, nf}, f)) {
                    rc = -1;
                    break;
                }
                wf = f->p + f->len;
                hints_follow(fs, t);
            }
            continue;
        bad: /* a field that does not decode: pack() says so */
            break;
        }
        col[COL_CODES].len = (size_t)(wc - col[COL_CODES].p);
        col[COL_ENTERS].len = (size_t)(we - col[COL_ENTERS].p);
        col[COL_DURS].len = (size_t)(wd - col[COL_DURS].p);
        col[COL_SITES].len = (size_t)(ws - col[COL_SITES].p);
        f->len = (size_t)(wf - f->p);
        if (rc || r < stop)
            break;
    }
out:
    *pp = p;
    *rp = r;
    return rc;
}

/* Inlined into each caller: a full trace's blocks, packed at every buffer flush, run a
 * loop without the reduced records' branches. */
static inline __attribute__((always_inline)) int pack(int reduced, const uint8_t *in, size_t len, uint32_t nrec,
                                                      const vt_evcols_funcs *fn, const vt_rcols_comms *rcomms,
                                                      uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    const uint8_t *p = in, *end = in + len;
    buf col[NCOLS] = {{0}}, hdr = {0};
    for (int c = 0; c < NCOLS; c++)
        col[c].max = (size_t)VT_BLOCK_MAX_RAW;
    hdr.max = 4 * VT_UVAR_MAX + NCOLS * VT_UVAR_MAX;
    lasts t = {0}, cseq = {0}, snd = {0};
    vals a = {0}, tmp = {0};
    comm_map comms = {0};
    int rc = -1;
    uint64_t first, base_seq = 0, seq;
    int64_t base;
    fast_state fs; /* pack_rows' (full records only) */
    if (!reduced)
        memset(&fs, 0, sizeof fs);
    if (reduced && vt__rcols_comm_map(&comms, rcomms))
        goto nomem;
    if (vt_get_uvar(&p, end, &first) || vt_get_svar(&p, end, &base) ||
        (reduced && vt_get_uvar(&p, end, &base_seq))) {
        fail(err, errlen, "the block header does not decode");
        goto out;
    }
    seq = base_seq;
    for (uint32_t r = 0;; r++) {
        if (!reduced && pack_rows(&p, end, &r, nrec, fn, &fs, col, &t, &a))
            goto nomem;
        if (r >= nrec)
            break;
        uint64_t code = 0, site = 0, dur = 0;
        int bad = copy_var(&p, end, &col[COL_CODES], &code);
        if (reduced && !bad) {
            uint64_t dseq;
            bad = copy_var(&p, end, &col[COL_SEQS], &dseq);
            seq += dseq;
        }
        bad = bad || copy_var(&p, end, &col[COL_ENTERS], NULL) || copy_var(&p, end, &col[COL_DURS], reduced ? &dur : NULL);
        a.n = 0;
        if (!bad && !reduced) {
            const char *letters = fields_of(code, fn);
            bad = (code >= VT_CODE_FIRST_FN && copy_var(&p, end, &col[COL_SITES], &site)) || !letters ||
                  read_fields(letters, &p, end, &a);
        } else if (!bad) {
            bad = vt__rcols_split(&code, &site, &p, end, seq, &a, col, &comms, &cseq, dur, &snd);
        }
        if (bad) {
            fail(err, errlen, "record %u does not decode", r);
            goto out;
        }
        if (a.n && (reduced ? vt__rcols_put(&t, code, site, &a, &col[COL_FIELDS], &tmp)
                            : put_values(&t, code, site, &a, &col[COL_FIELDS])))
            goto nomem;
    }
    if (p != end) {
        fail(err, errlen, "%zu bytes after the last record", (size_t)(end - p));
        goto out;
    }
    for (int c = 0; reduced && c < NCOLS; c++)
        if (col_squeezed(c) && vt__rcols_squeeze(&col[c]))
            goto nomem;
    if (reduced && put_u(&col[COL_FORM], 1))
        goto nomem;
    if (reserve(&hdr, hdr.max))
        goto nomem;
    hdr.len = (size_t)(vt_put_svar(vt_put_uvar(hdr.p, first), base) - hdr.p);
    if (reduced)
        hdr.len = (size_t)(vt_put_uvar(hdr.p + hdr.len, base_seq) - hdr.p);
    size_t total = 0;
    for (int c = 0; c < NCOLS; c++) {
        if (!col_in(reduced, c))
            continue;
        hdr.len = (size_t)(vt_put_uvar(hdr.p + hdr.len, col[c].len) - hdr.p);
        total += col[c].len;
    }
    uint8_t *o = malloc(hdr.len + total + 1);
    if (!o)
        goto nomem;
    memcpy(o, hdr.p, hdr.len);
    size_t at = hdr.len;
    for (int c = 0; c < NCOLS; c++) {
        if (col[c].len)
            memcpy(o + at, col[c].p, col[c].len);
        at += col[c].len;
    }
    *out = o;
    *outlen = at;
    rc = 0;
    goto out;
nomem:
    fail(err, errlen, "out of memory");
out:
    for (int c = 0; c < NCOLS; c++)
        free(col[c].p);
    free(hdr.p);
    free(a.v);
    free(tmp.v);
    free(comms.id);
    free(comms.at);
    lasts_free(&t);
    lasts_free(&cseq);
    lasts_free(&snd);
    return rc;
}

int vt_evcols_pack(const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn, uint8_t **out,
                   size_t *outlen, char *err, size_t errlen)
{
    return pack(0, in, len, nrec, fn, NULL, out, outlen, err, errlen);
}

int vt_rcols_pack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, uint8_t **out,
                  size_t *outlen, char *err, size_t errlen)
{
    return pack(2, in, len, nrec, NULL, comms, out, outlen, err, errlen);
}

/* ------------------------------------------------------------------ unpacking */

/* REDUCED: 1 the form of 1.3 and 1.4, 2 that of 1.5 (a message's times and the split
 * columns, rcols.c). */
static int unpack(int reduced, const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn,
                  const vt_rcols_comms *comms, size_t max_out, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    const uint8_t *p = in, *end = in + len;
    buf o = {.max = max_out}, split[NCOLS] = {{0}};
    lasts t = {0}, cseq = {0}, snd = {0};
    size_t cstart[NCOLS] = {0};
    vals a = {0}, tmp = {0};
    cursor c[NCOLS] = {{0}};
    uint64_t first, base_seq = 0, seq, clen[NCOLS] = {0};
    int64_t base;
    int rc = -1;
    if (vt_get_uvar(&p, end, &first) || vt_get_svar(&p, end, &base) ||
        (reduced && vt_get_uvar(&p, end, &base_seq))) {
        fail(err, errlen, "expected the block header at byte 0");
        goto out;
    }
    for (int k = 0; k < NCOLS; k++)
        if (col_in(reduced, k) && vt_get_uvar(&p, end, &clen[k])) {
            fail(err, errlen, "expected the length of the %s column at byte %zu", col_name[k], (size_t)(p - in));
            goto out;
        }
    for (int k = 0; k < NCOLS; k++) {
        if (clen[k] > (uint64_t)(end - p)) {
            fail(err, errlen, "expected %llu bytes of the %s column at byte %zu, found %zu",
                 (unsigned long long)clen[k], col_name[k], (size_t)(p - in), (size_t)(end - p));
            goto out;
        }
        c[k] = (cursor){p, p + clen[k]};
        cstart[k] = (size_t)(p - in);
        p += clen[k];
    }
    if (p != end) {
        fail(err, errlen, "expected the payload to end after the columns at byte %zu, found %zu more bytes",
             (size_t)(p - in), (size_t)(end - p));
        goto out;
    }
    if (reduced == 2) {
        if (clen[COL_FORM] != 1 || *c[COL_FORM].p != 1) {
            fail(err, errlen, "expected the form column at byte %zu to be one byte, 1", cstart[COL_FORM]);
            goto out;
        }
        c[COL_FORM].p++;
    }
    for (int k = 0; reduced == 2 && k < NCOLS; k++) {
        if (!col_squeezed(k))
            continue;
        split[k].max = max_out;
        int e = vt__rcols_expand(&c[k], &split[k]);
        if (e == -2)
            goto room;
        if (e) {
            fail(err, errlen, "expected the %s column at byte %zu as a count, low bytes and high parts", col_name[k],
                 cstart[k]);
            goto out;
        }
    }
/* where an error in column K is: in the payload, or the start of a split column */
#define COL_AT(k) (split[k].p ? cstart[k] : (size_t)(c[k].p - in))
    if (put_u(&o, first) || reserve(&o, VT_UVAR_MAX))
        goto room;
    o.len = (size_t)(vt_put_svar(o.p + o.len, base) - o.p);
    if (reduced && put_u(&o, base_seq))
        goto room;
    seq = base_seq;
    for (uint32_t r = 0; r < nrec; r++) {
        uint64_t code = 0, site = 0, fnp = 0, u = 0, dseq = 0, dur = 0;
        int k = -1;
        if (get_u(&c[COL_CODES].p, c[COL_CODES].end, &code))
            k = COL_CODES;
        else if (put_u(&o, code))
            goto room;
        else if (reduced && get_u(&c[COL_SEQS].p, c[COL_SEQS].end, &dseq))
            k = COL_SEQS;
        else if (reduced && put_u(&o, dseq))
            goto room;
        else if (get_u(&c[COL_ENTERS].p, c[COL_ENTERS].end, &u))
            k = COL_ENTERS;
        else if (put_u(&o, u))
            goto room;
        else if (get_u(&c[COL_DURS].p, c[COL_DURS].end, &dur))
            k = COL_DURS;
        else if (put_u(&o, dur))
            goto room;
        seq += dseq;
        int sited = reduced ? rkind_ok(code) && rkind_has_site(code) : code >= VT_CODE_FIRST_FN;
        if (k < 0 && sited && reduced && get_u(&c[COL_SITES].p, c[COL_SITES].end, &fnp))
            k = COL_SITES;
        if (k < 0 && sited && get_u(&c[COL_SITES].p, c[COL_SITES].end, &site))
            k = COL_SITES;
        if (k >= 0) {
            fail(err, errlen, "record %u: expected a value in the %s column at byte %zu", r, col_name[k], COL_AT(k));
            goto out;
        }
        const char *letters = NULL;
        int has_values;
        if (reduced) {
            if (!rkind_ok(code)) {
                fail(err, errlen, "record %u: expected a reduced record kind, found %llu", r, (unsigned long long)code);
                goto out;
            }
            has_values = rkind_has_values(code);
        } else {
            if (!(letters = fields_of(code, fn))) {
                fail(err, errlen, "record %u: expected a known record code, found %llu", r, (unsigned long long)code);
                goto out;
            }
            if (sited && put_u(&o, site))
                goto room;
            has_values = *letters != 0;
        }
        a.n = 0;
        uint64_t key = reduced ? code | fnp << 8 : code;
        if (has_values) {
            cursor *f = &c[COL_FIELDS];
            const uint8_t *at = f->p;
            uint64_t tag, mask = ~(uint64_t)0;
            if (get_u(&f->p, f->end, &tag) || tag > (reduced ? TAG_SPARSE : TAG_DELTA) ||
                (tag == TAG_SPARSE && get_u(&f->p, f->end, &mask))) {
                fail(err, errlen, "record %u: expected a tag 0-%d in the fields column at byte %zu", r,
                     reduced ? TAG_SPARSE : TAG_DELTA, (size_t)(at - in));
                goto out;
            }
            if (reduced && vt__rcols_seed(&t, key, site, &tmp))
                goto nomem;
            last *l = lasts_get(&t, key, site);
            if (!l)
                goto nomem;
            if (tag == TAG_LITERAL) {
                int bad = reduced ? vt__rcols_read(code, &f->p, f->end, &a) : read_fields(letters, &f->p, f->end, &a);
                if (bad) {
                    fail(err, errlen, "record %u: expected the values of code %llu in the fields column at byte %zu", r,
                         (unsigned long long)code, (size_t)(at - in));
                    goto out;
                }
            } else if (!l->n || (tag == TAG_SPARSE && (l->n > 64 || (l->n < 64 && mask >> l->n)))) {
                fail(err, errlen, "record %u: values given as %s an earlier record of code %llu at byte %zu, found %s", r,
                     tag == TAG_SAME ? "those of" : "differences to", (unsigned long long)code, (size_t)(at - in),
                     l->n ? "a mask past its values" : "none");
                goto out;
            } else {
                for (size_t i = 0; i < l->n; i++) {
                    int64_t d = 0;
                    int differs = tag == TAG_DELTA || (tag == TAG_SPARSE && (mask >> i & 1));
                    if (differs && vt_get_svar(&f->p, f->end, &d)) {
                        fail(err, errlen, "record %u: expected %zu differences in the fields column at byte %zu", r,
                             l->n, (size_t)(at - in));
                        goto out;
                    }
                    if (vals_push(&a, l->v[i] + l->step[i] + (uint64_t)d))
                        goto nomem;
                }
            }
            if (set_values(&t, l, a.v, a.n) || (reduced && vt__rcols_kind_set(&t, key, a.v, a.n)))
                goto nomem;
        }
        /* the values where the record has them */
        int bad;
        if (reduced) {
            bad = vt__rcols_join(code, sited, fnp, site, a.v, a.n, seq, &c[COL_TIMES], &o, comms, &cseq, dur,
                                 reduced == 2 ? &snd : NULL);
            if (bad == 1) {
                fail(err, errlen, "record %u: expected a time in the times column at byte %zu", r, COL_AT(COL_TIMES));
                goto out;
            }
            if (bad == 2)
                goto room;
            if (bad == 3) {
                fail(err, errlen, "record %u: expected a communicator of the rank's table (%zu entries), found one past it",
                     r, comms ? comms->n : 0);
                goto out;
            }
        } else {
            bad = has_values && write_fields(letters, a.v, a.n, &o);
        }
        if (bad) {
            if (o.len + VT_UVAR_MAX > o.max)
                goto room;
            fail(err, errlen, "record %u: its values in the fields column do not fit its code %llu", r,
                 (unsigned long long)code);
            goto out;
        }
    }
    for (int k = 0; k < NCOLS; k++)
        if (c[k].p != c[k].end) {
            fail(err, errlen, "expected the %s column to end after record %u at byte %zu, found %zu more bytes",
                 col_name[k], nrec, COL_AT(k), (size_t)(c[k].end - c[k].p));
            goto out;
        }
    *out = o.p;
    *outlen = o.len;
    o.p = NULL;
    rc = 0;
    goto out;
room:
    fail(err, errlen, "expected the unpacked records to fit in %zu bytes", max_out);
    goto out;
nomem:
    fail(err, errlen, "out of memory");
out:
#undef COL_AT
    free(o.p);
    for (int k = 0; k < NCOLS; k++)
        free(split[k].p);
    free(tmp.v);
    free(a.v);
    lasts_free(&t);
    lasts_free(&cseq);
    lasts_free(&snd);
    return rc;
}

int vt_evcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_evcols_funcs *fn, size_t max_out,
                     uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    return unpack(0, in, len, nrec, fn, NULL, max_out, out, outlen, err, errlen);
}

int vt_rcols_unpack(const uint8_t *in, size_t len, uint32_t nrec, const vt_rcols_comms *comms, uint32_t version,
                    size_t max_out, uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    return unpack(version >= VT_VERSION(1, 5) ? 2 : 1, in, len, nrec, NULL, comms, max_out, out, outlen, err, errlen);
}

/* ------------------------------------------------------------------ record by record */

vt_evcols_dec *vt_evcols_dec_new(vt_evcols_vals *shared, struct vt_blockpool *pool)
{
    vt_evcols_dec *d = vt_blockpool_calloc(pool, sizeof *d);
    if (d) {
        d->a = shared ? shared : &d->own;
        d->t.pool = pool;
    }
    return d;
}

void vt_evcols_dec_free(vt_evcols_dec *d)
{
    if (!d)
        return;
    lasts_free(&d->t);
    free(d->own.v);
    vt_blockpool_free(d->t.pool, d, sizeof *d);
}

int vt_evcols_dec_start(vt_evcols_dec *d, const uint8_t *in, size_t len, const vt_evcols_funcs *fn, uint64_t *first,
                        int64_t *base)
{
    const uint8_t *p = in, *end = in + len;
    uint64_t clen[NCOLS] = {0};
    lasts_free(&d->t); /* each block stands alone */
    d->t = (lasts){.pool = d->t.pool};
    memset(d->hint, 0, sizeof d->hint);
    memset(d->plan, 0, sizeof d->plan);
    /* small to start with: a cursor per rank, and 64K ranks */
    if (!(d->t.e = vt_blockpool_calloc(d->t.pool, 8 * sizeof *d->t.e)))
        return -1;
    d->t.cap = 8;
    if (!d->a->v) {
        if (!(d->a->v = malloc(16 * sizeof *d->a->v)))
            return -1;
        d->a->cap = 16;
    }
    d->fn = *fn;
    if (vt_get_uvar(&p, end, first) || vt_get_svar(&p, end, base))
        return -1;
    for (int k = 0; k < NCOLS; k++)
        if (col_in(0, k) && vt_get_uvar(&p, end, &clen[k]))
            return -1;
    for (int k = 0; k < NCOLS; k++) {
        if (clen[k] > (uint64_t)(end - p))
            return -1;
        d->c[k] = (cursor){p, p + clen[k]};
        p += clen[k];
    }
    return p == end ? 0 : -1;
}

void vt_evcols_dec_rebase(vt_evcols_dec *d, uintptr_t from, const uint8_t *to)
{
    for (int k = 0; k < NCOLS; k++) {
        d->c[k].p = to + ((uintptr_t)d->c[k].p - from);
        d->c[k].end = to + ((uintptr_t)d->c[k].end - from);
    }
}

int vt_evcols_dec_done(const vt_evcols_dec *d)
{
    for (int k = 0; k < NCOLS; k++)
        if (d->c[k].p != d->c[k].end)
            return 0;
    return 1;
}
