#include "model/model.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/settings.h"

/* ------------------------------------------------------------------ rules over scenarios
 *
 * Plain loops, and AVX2 ones chosen at run time on x86-64 (the build targets the
 * baseline x86-64, whose SSE2 has no 64-bit comparison to vectorise a minimum with).
 * The same integers either way. */

#if defined(__x86_64__) && defined(__GNUC__)
#define VT_MODEL_AVX2 1
typedef int64_t v4i64 __attribute__((vector_size(32)));

__attribute__((target("avx2"))) static inline v4i64 v4_load(const int64_t *p)
{
    v4i64 v;
    memcpy(&v, p, sizeof v);
    return v;
}

__attribute__((target("avx2"))) static inline void v4_store(int64_t *p, v4i64 v) { memcpy(p, &v, sizeof v); }

__attribute__((target("avx2"))) static inline v4i64 v4_min(v4i64 a, v4i64 b)
{
    v4i64 lt = a < b;
    return (a & lt) | (b & ~lt);
}

__attribute__((target("avx2"))) static size_t min_shifted_avx2(int64_t *restrict out, const int64_t *restrict D,
                                                                int64_t gap, size_t n)
{
    v4i64 g = {gap, gap, gap, gap};
    size_t s = 0;
    for (; s + 4 <= n; s += 4)
        v4_store(out + s, v4_min(v4_load(D + s) + g, v4_load(out + s)));
    return s;
}

__attribute__((target("avx2"))) static size_t shifted_avx2(int64_t *restrict out, const int64_t *restrict D,
                                                            int64_t gap, size_t n)
{
    v4i64 g = {gap, gap, gap, gap};
    size_t s = 0;
    for (; s + 4 <= n; s += 4)
        v4_store(out + s, v4_load(D + s) + g);
    return s;
}

__attribute__((target("avx2"))) static size_t candidates_avx2(int64_t *restrict d, const int64_t *restrict base,
                                                               const int64_t *restrict delta, int64_t span, size_t n)
{
    v4i64 sp = {span, span, span, span};
    size_t s = 0;
    for (; s + 4 <= n; s += 4)
        v4_store(d + s, v4_min(v4_load(base + s) + v4_load(delta + s), v4_load(d + s) + sp));
    return s;
}

static int have_avx2(size_t n) { return n >= 4 && __builtin_cpu_supports("avx2"); }
#endif

void vt_model_shifted(int64_t *restrict out, const int64_t *restrict D, int64_t gap, size_t n)
{
    size_t s = 0;
#ifdef VT_MODEL_AVX2
    if (have_avx2(n))
        s = shifted_avx2(out, D, gap, n);
#endif
    for (; s < n; s++)
        out[s] = D[s] + gap;
}

void vt_model_min_shifted(int64_t *restrict out, const int64_t *restrict D, int64_t gap, size_t n)
{
    size_t s = 0;
#ifdef VT_MODEL_AVX2
    if (have_avx2(n))
        s = min_shifted_avx2(out, D, gap, n);
#endif
    for (; s < n; s++) {
        int64_t v = D[s] + gap;
        out[s] = v < out[s] ? v : out[s];
    }
}

void vt_model_candidates(int64_t *restrict d, const int64_t *restrict base, const int64_t *restrict delta,
                         int64_t span, size_t n)
{
    size_t s = 0;
#ifdef VT_MODEL_AVX2
    if (have_avx2(n))
        s = candidates_avx2(d, base, delta, span, n);
#endif
    for (; s < n; s++)
        d[s] = vt_model_candidate(base[s], delta[s], d[s], span, 0);
}

void vt_model_defaults(vt_model_params *p)
{
    p->theta = 1000000;
    p->cand_calls = 1;
    p->L = 1000;
    p->G_ps = 0;
    p->T_rdv = 8256;   /* MPICH ch4:ucx same-node eager limit (piggyback-notes.md) */
    p->m = 4;
    p->K = 8;
    p->pbytes = 0;
}

static int line_value(const char *text, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (!strncmp(l, key, kl) && l[kl] == '=') {
            const char *v = l + kl + 1, *e = strchr(v, '\n');
            size_t n = e ? (size_t)(e - v) : strlen(v);
            if (n >= len)
                n = len - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return 1;
        }
    }
    return 0;
}

/* "expected a valid KEY, found 'VALUE'", the value's bytes that are not printable as \xHH. */
static void bad_value(char *err, size_t errlen, const char *key, const char *v)
{
    char shown[4 * 128 + 1];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)v; *p && o + 5 < sizeof shown; p++)
        o += (size_t)(*p >= 0x20 && *p < 0x7f && *p != '\\' ? snprintf(shown + o, sizeof shown - o, "%c", *p)
                                                            : snprintf(shown + o, sizeof shown - o, "\\x%02x", *p));
    shown[o] = 0;
    snprintf(err, errlen, "expected a valid %s, found '%s'", key, shown);
}

int vt_model_params_parse(vt_model_params *p, const char *text, char *err, size_t errlen)
{
    char v[128];
    int64_t d;
    int i;
    if (!text)
        return 0;
#define BAD(key) \
    do { \
        bad_value(err, errlen, key, v); \
        return -1; \
    } while (0)
    if (line_value(text, "VTRACE_THRESHOLD", v, sizeof v)) {
        if (vt_parse_duration(v, &d))
            BAD("VTRACE_THRESHOLD");
        p->theta = d;
    }
    if (line_value(text, "VTRACE_CANDIDATES", v, sizeof v)) {
        if (!strcmp(v, "all"))
            p->cand_calls = 1;
        else if (!strcmp(v, "bursts"))
            p->cand_calls = 0;
        else
            BAD("VTRACE_CANDIDATES");
    }
    if (line_value(text, "VTRACE_MODEL_L", v, sizeof v)) {
        if (vt_parse_duration(v, &d))
            BAD("VTRACE_MODEL_L");
        p->L = d;
    }
    if (line_value(text, "VTRACE_MODEL_G", v, sizeof v)) {
        if (vt_parse_per_byte(v, &d))
            BAD("VTRACE_MODEL_G");
        p->G_ps = d;
    }
    if (line_value(text, "VTRACE_MODEL_TRDV", v, sizeof v)) {
        uint64_t s;
        if (vt_parse_size(v, &s))
            BAD("VTRACE_MODEL_TRDV");
        p->T_rdv = (int64_t)s;
    }
    if (line_value(text, "VTRACE_MODEL_M", v, sizeof v)) {
        if (vt_parse_int(v, 1, 7, &i))
            BAD("VTRACE_MODEL_M");
        p->m = i;
    }
    if (line_value(text, "VTRACE_MODEL_K", v, sizeof v)) {
        if (vt_parse_int(v, 1, 8, &i))
            BAD("VTRACE_MODEL_K");
        p->K = i;
    }
    if (line_value(text, "VTRACE_MODEL_PBYTES", v, sizeof v)) {
        if (vt_parse_int(v, 0, 4096, &i))
            BAD("VTRACE_MODEL_PBYTES");
        p->pbytes = i;
    }
#undef BAD
    return 0;
}

static const struct { const char *name; enum vt_model_kind kind; } kinds[] = {
    {"MPI_Send", VT_MK_SEND}, {"MPI_Rsend", VT_MK_SEND}, {"MPI_Ssend", VT_MK_SSEND},
    {"MPI_Bsend", VT_MK_BSEND}, {"MPI_Isend", VT_MK_ISEND}, {"MPI_Irsend", VT_MK_ISEND},
    {"MPI_Issend", VT_MK_ISSEND}, {"MPI_Ibsend", VT_MK_IBSEND}, {"MPI_Recv", VT_MK_RECV},
    {"MPI_Mrecv", VT_MK_RECV}, {"MPI_Irecv", VT_MK_IRECV}, {"MPI_Imrecv", VT_MK_IRECV},
    {"MPI_Sendrecv", VT_MK_SENDRECV}, {"MPI_Sendrecv_replace", VT_MK_SENDRECV},
    {"MPI_Isendrecv", VT_MK_IRECV}, {"MPI_Isendrecv_replace", VT_MK_IRECV},
    {"MPI_Probe", VT_MK_PROBE}, {"MPI_Iprobe", VT_MK_PROBE}, {"MPI_Mprobe", VT_MK_PROBE},
    {"MPI_Improbe", VT_MK_PROBE}, {"MPI_Wait", VT_MK_COMPLETION}, {"MPI_Waitall", VT_MK_COMPLETION},
    {"MPI_Waitany", VT_MK_COMPLETION}, {"MPI_Waitsome", VT_MK_COMPLETION}, {"MPI_Test", VT_MK_COMPLETION},
    {"MPI_Testall", VT_MK_COMPLETION}, {"MPI_Testany", VT_MK_COMPLETION}, {"MPI_Testsome", VT_MK_COMPLETION},
    {"MPI_Start", VT_MK_START}, {"MPI_Startall", VT_MK_START}, {"MPI_Finalize", VT_MK_END},
};

static const char *const colls[] = {
    "Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
    "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce", "Reduce_scatter",
    "Reduce_scatter_block", "Scan", "Exscan", "Neighbor_allgather", "Neighbor_allgatherv",
    "Neighbor_alltoall", "Neighbor_alltoallv", "Neighbor_alltoallw",
};

enum vt_model_kind vt_model_kind_of(const char *name)
{
    char base[64];
    size_t n = strlen(name);
    if (n >= sizeof base)
        return VT_MK_LOCAL;
    memcpy(base, name, n + 1);
    if (n > 2 && !strcmp(base + n - 2, "_c"))
        base[n - 2] = '\0';   /* large-count variants behave as their base */
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(base, kinds[i].name))
            return kinds[i].kind;
    if (strncmp(base, "MPI_", 4))
        return VT_MK_LOCAL;
    const char *b = base + 4;
    for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
        if (!strcmp(b, colls[i]))
            return VT_MK_COLL;
        /* MPI_Iallreduce, MPI_Ineighbor_alltoall: 'I' then the name with a small letter. */
        if (b[0] == 'I' && (char)tolower((unsigned char)colls[i][0]) == b[1] && !strcmp(b + 2, colls[i] + 1))
            return VT_MK_ICOLL;
    }
    return VT_MK_LOCAL;
}

enum vt_model_kind vt_model_send_kind(const char *name)
{
    if (strstr(name, "Ssend") || strstr(name, "Issend"))
        return VT_MK_SSEND;
    if (strstr(name, "Bsend") || strstr(name, "Ibsend"))
        return VT_MK_BSEND;
    return VT_MK_SEND;
}
