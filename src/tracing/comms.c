#include "tracing/comms.h"
#include "tracing/rtreduce.h"
#include "tracing/log.h"
#include "tracing/mpihandle.h"

#include <stdlib.h>
#include <string.h>

static vt_comm **table;      /* by index, never shrinks: indexes stay valid in the trace */
static uint32_t ncomms, capcomms;
/* Open-addressing map from live handle to record. */
static vt_comm **map;
static uint32_t mapcap, mapused;
static int world_rank_;
VT_HIDDEN vt_comm *vt__world;
VT_HIDDEN int vt__world_size;
VT_HIDDEN uint32_t vt__world_index;
static vt_comm *self_;
static MPI_Group world_group;
static int64_t last_group_tag; /* of the table's last VT_CID_GROUP entry (tag_base) */

static uint32_t slot_of(MPI_Comm h)
{
    uint64_t x = VT_HANDLE_KEY(h) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32) & (mapcap - 1);
}

static void map_put(vt_comm *c);
static vt_comm *append(vt_comm *c);

static void map_grow(void)
{
    vt_comm **old = map;
    uint32_t oldcap = mapcap;
    mapcap = mapcap ? mapcap * 2 : 64;
    map = calloc(mapcap, sizeof *map);
    mapused = 0;
    for (uint32_t i = 0; i < oldcap; i++)
        if (old[i] && old[i]->alive)
            map_put(old[i]);
    free(old);
}

static void map_put(vt_comm *c)
{
    if ((mapused + 1) * 2 > mapcap)
        map_grow();
    uint32_t i = slot_of(c->handle);
    while (map[i] && map[i]->alive && map[i]->handle != c->handle)
        i = (i + 1) & (mapcap - 1);
    if (!map[i] || !map[i]->alive)
        mapused++;
    map[i] = c;
}

static vt_comm *map_get(MPI_Comm h)
{
    if (!mapcap)
        return NULL;
    uint32_t i = slot_of(h);
    while (map[i]) {
        if (map[i]->handle == h && map[i]->alive)
            return map[i];
        i = (i + 1) & (mapcap - 1);
    }
    return NULL;
}

/* World ranks of a group, NULL when it is the identity of the whole world. */
static int *world_ranks(MPI_Group g, int n)
{
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        in[i] = i;
    PMPI_Group_translate_ranks(g, n, in, world_group, out);
    free(in);
    return out;
}

static int lowest(const int *w, int n)
{
    int lo = w ? w[0] : 0;
    for (int i = 1; w && i < n; i++)
        if (w[i] < lo)
            lo = w[i];
    return lo;
}

/* The members as the trace stores them (rankdefs.c): none when one is in another MPI
 * world (no rank in this trace). */
static uint32_t *stored_members(const int *w, int n, uint32_t *count)
{
    *count = 0;
    for (int i = 0; i < n; i++)
        if ((w ? w[i] : i) < 0)
            return NULL;
    uint32_t *m = malloc(sizeof *m * (size_t)(n > 0 ? n : 1));
    for (int i = 0; m && i < n; i++)
        m[i] = (uint32_t)(w ? w[i] : i);
    if (m)
        *count = (uint32_t)n;
    return m;
}

/* Stores O when the reader derives gid from it and what the trace holds of c, else
 * the id itself. */
static void set_origin(vt_comm *c, const vt_comm_origin *o)
{
    c->origin = (vt_comm_origin){.kind = VT_CID_EXPLICIT, .id = c->gid};
    if (!o || o->kind == VT_CID_EXPLICIT)
        return;
    uint32_t n, rn = 0;
    uint32_t *m = stored_members(c->world, c->size, &n), *rm = NULL;
    if (c->inter)
        rm = stored_members(c->rworld, c->rsize, &rn);
    const uint64_t *pid = c->parent >= 0 && (uint32_t)c->parent < c->index ? &table[c->parent]->gid : NULL;
    uint64_t id;
    if ((m || !c->size) && (rm || !c->inter || !c->rsize) &&
        vt_comm_id_derive(o, (uint32_t)world_rank_, c->inter, m, n, rm, rn, pid, &id) == 0 && id == c->gid)
        c->origin = *o;
    free(m);
    free(rm);
    /* the table's entries before this one give what the stored values differ from */
    if (c->origin.kind == VT_CID_PARENT) {
        vt_comm *p = table[c->parent];
        c->origin.count_base = p->next_count;
        if (c->origin.count < p->next_count) /* not in the order made: cannot be */
            c->origin = (vt_comm_origin){.kind = VT_CID_EXPLICIT, .id = c->gid};
        else
            p->next_count = c->origin.count + 1;
    } else if (c->origin.kind == VT_CID_GROUP) {
        c->origin.tag_base = last_group_tag;
        last_group_tag = c->origin.tag;
    }
}

vt_comm *vt_comm_register(MPI_Comm h, uint64_t gid, int parent, const char *how, const vt_comm_origin *o)
{
    vt_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->handle = h;
    c->gid = gid;
    c->parent = parent;
    c->how = how;
    c->alive = 1;
    PMPI_Comm_rank(h, &c->myrank);
    if (h == MPI_COMM_WORLD) {
        PMPI_Comm_size(h, &c->size);
    } else {
        int inter = 0;
        PMPI_Comm_test_inter(h, &inter);
        c->inter = inter;
        MPI_Group g;
        PMPI_Comm_group(h, &g);
        PMPI_Group_size(g, &c->size);
        c->world = world_ranks(g, c->size);
        PMPI_Group_free(&g);
        if (inter) {
            PMPI_Comm_remote_group(h, &g);
            PMPI_Group_size(g, &c->rsize);
            c->rworld = world_ranks(g, c->rsize);
            PMPI_Group_free(&g);
        }
    }
    append(c);
    set_origin(c, o);
    map_put(c);
    return c;
}

static vt_comm *append(vt_comm *c)
{
    if (ncomms == capcomms) {
        capcomms = capcomms ? capcomms * 2 : 16;
        table = realloc(table, capcomms * sizeof *table);
    }
    c->index = ncomms;
    table[ncomms++] = c;
    return c;
}

vt_comm *vt_comm_register_like(MPI_Comm h, uint64_t gid, const vt_comm *like, const char *how,
                               const vt_comm_origin *o)
{
    vt_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = (vt_comm){.handle = h, .gid = gid, .parent = (int)like->index, .how = how, .alive = 1,
                   .size = like->size, .myrank = like->myrank, .inter = like->inter, .rsize = like->rsize};
    if (like->world) {
        c->world = malloc(sizeof(int) * (size_t)c->size);
        memcpy(c->world, like->world, sizeof(int) * (size_t)c->size);
    }
    if (like->rworld) {
        c->rworld = malloc(sizeof(int) * (size_t)c->rsize);
        memcpy(c->rworld, like->rworld, sizeof(int) * (size_t)c->rsize);
    }
    append(c);
    set_origin(c, o);
    map_put(c);
    return c;
}

vt_comm *vt_comm_invalid(void)
{
    static vt_comm *invalid;
    if (!invalid) {
        invalid = calloc(1, sizeof *invalid);
        *invalid = (vt_comm){.handle = MPI_COMM_NULL, .gid = 0, .parent = -1, .myrank = -1, .how = "invalid",
                             .origin = {.kind = VT_CID_EXPLICIT, .id = 0}};
        append(invalid);
    }
    return invalid;
}

/* How many communicators were made before over a new group only with this key (its
 * members, tag and parent): every member of such a group takes part in each of its
 * calls, so all count alike. Open addressing; grows. */
static struct group_count {
    uint64_t key, n;
} *gcounts;
static size_t gcap, gused;

static uint64_t group_count_next(uint64_t key)
{
    if ((gused + 1) * 2 > gcap) {
        size_t nc = gcap ? 2 * gcap : 64;
        struct group_count *t = calloc(nc, sizeof *t);
        if (!t)
            return 0;
        for (size_t i = 0; i < gcap; i++) {
            if (!gcounts[i].n)
                continue;
            size_t j = gcounts[i].key & (nc - 1);
            while (t[j].n)
                j = (j + 1) & (nc - 1);
            t[j] = gcounts[i];
        }
        free(gcounts);
        gcounts = t;
        gcap = nc;
    }
    size_t j = key & (gcap - 1);
    while (gcounts[j].n && gcounts[j].key != key)
        j = (j + 1) & (gcap - 1);
    if (!gcounts[j].n) {
        gcounts[j].key = key;
        gused++;
    }
    return gcounts[j].n++;
}

/* The id of a communicator made by a collective over its parent, or over the new
 * group only: see doc/format.md. */
uint64_t vt_comm_child_gid(const vt_comm *parent, uint64_t count, MPI_Comm child, int group_only, int tag,
                           vt_comm_origin *o)
{
    MPI_Group g;
    int n, rn = 0, inter = 0;
    PMPI_Comm_test_inter(child, &inter);
    PMPI_Comm_group(child, &g);
    PMPI_Group_size(g, &n);
    int *w = world_ranks(g, n);
    PMPI_Group_free(&g);
    int *rw = NULL;
    if (inter) {
        PMPI_Comm_remote_group(child, &g);
        PMPI_Group_size(g, &rn);
        rw = world_ranks(g, rn);
        PMPI_Group_free(&g);
    }
    if (!group_only) {
        int lo = lowest(w, n), rlo = rw ? lowest(rw, rn) : lo;
        free(w);
        free(rw);
        *o = (vt_comm_origin){.kind = VT_CID_PARENT, .count = count};
        return vt_comm_id_parent(parent->gid, count, (uint64_t)(rlo < lo ? rlo : lo));
    }
    /* Only the new group's members take part (MPI_Comm_create_group over parent, or
     * MPI_Intercomm_create over two local communicators, different on the two sides):
     * the key is every member's world rank, sorted, the tag and, for create_group, the
     * parent; the id adds how many earlier calls had that key. */
    int64_t *all = malloc(sizeof *all * (size_t)(n + rn + 1));
    size_t nall = 0;
    if (all && w && (rw || !rn))
        for (int i = 0; i < n + rn; i++)
            all[nall++] = i < n ? w[i] : rw[i - n];
    uint64_t key = vt_comm_id_group_key(all, nall, tag, inter ? 0 : parent->gid);
    free(all);
    free(w);
    free(rw);
    *o = (vt_comm_origin){.kind = VT_CID_GROUP, .tag = tag, .count = group_count_next(key)};
    return vt_comm_id_group(key, o->count);
}

vt_comm *vt__comm_get_slow(MPI_Comm h)
{
    vt_comm *c = map_get(h);
    if (c || h == MPI_COMM_NULL)
        return c;
    /* Unknown: made before we started or through a call we do not wrap. Its id is
     * derived from its members alone, so every member still agrees. */
    MPI_Group g;
    int n;
    if (PMPI_Comm_group(h, &g) != MPI_SUCCESS)
        return NULL;
    PMPI_Group_size(g, &n);
    int *w = world_ranks(g, n);
    PMPI_Group_free(&g);
    int64_t *w64 = malloc(sizeof *w64 * (size_t)(n > 0 ? n : 1));
    for (int i = 0; w64 && w && i < n; i++)
        w64[i] = w[i];
    uint64_t id = vt_comm_id_members(w64, w64 && w ? (size_t)n : 0);
    free(w64);
    free(w);
    vt_comm_origin o = {.kind = VT_CID_MEMBERS};
    return vt_comm_register(h, id, -1, "unknown", &o);
}

void vt_comm_forget(MPI_Comm h)
{
    vt_comm *c = map_get(h);
    if (c && c != vt__world && c != self_)
        c->alive = 0;
}

void vt_comms_init(int world_rank, int world_size)
{
    (void)world_size;
    world_rank_ = world_rank;
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
    vt_comm_origin world = {.kind = VT_CID_WORLD}, self = {.kind = VT_CID_SELF};
    vt__world = vt_comm_register(MPI_COMM_WORLD, 1, -1, "world", &world);
    vt__world_index = vt__world->index;
    vt__world_size = vt__world->size;
    self_ = vt_comm_register(MPI_COMM_SELF, VT_CID_SELF_BASE + (uint64_t)world_rank_, -1, "self", &self);
}

int vt_comm_lowest(const vt_comm *c)
{
    int lo = lowest(c->world, c->size);
    if (c->inter && c->rsize > 0) {
        int rlo = lowest(c->rworld, c->rsize);
        if (rlo < lo)
            lo = rlo;
    }
    return lo;
}

uint32_t vt_comms_count(void) { return ncomms; }

uint64_t vt_comms_world_gid(void) { return vt__world->gid; }

const uint64_t *vt_comms_gids(size_t *n)
{
    static uint64_t *gids;
    static size_t cap;
    if (ncomms > cap) {
        uint64_t *g = realloc(gids, ncomms * sizeof *g);
        if (!g) {
            *n = 0;
            return NULL;
        }
        gids = g;
        cap = ncomms;
    }
    for (uint32_t i = 0; i < ncomms; i++)
        gids[i] = table[i]->gid;
    *n = ncomms;
    return gids;
}
vt_comm *vt_comm_at(uint32_t index) { return index < ncomms ? table[index] : NULL; }
