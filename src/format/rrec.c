/* Encoding of reduced records; see rrec.h and doc/format.md. */
#include "vt_config.h"
#include "format/rrec.h"
#include "format/blockio.h"
#include "util/codec.h"

#include <errno.h>
#include <stdlib.h>

int vt_rrec_out_init(vt_rrec_out *o, int fd, int zstd_level)
{
    *o = (vt_rrec_out){.fd = fd, .zstd_level = zstd_level, .cap = VT_RREC_BLOCK_BYTES};
    o->buf = malloc(o->cap);
    return o->buf ? 0 : -ENOMEM;
}

int vt_rrec_out_flush(vt_rrec_out *o)
{
    if (!o->len)
        return 0;
    int rc = vt_block_write(o->fd, VT_BLOCK_REDUCED, o->buf, o->len, o->nblock, o->zstd_level);
    o->len = 0;
    o->nblock = 0;
    return rc;
}

int vt_rrec_out_put(vt_rrec_out *o, const vt_rrec *rec)
{
    size_t need = vt_rrec_size_max(rec) + 3 * VT_UVAR_MAX;
    if (o->len && o->len + need > VT_RREC_BLOCK_BYTES) {
        int rc = vt_rrec_out_flush(o);
        if (rc)
            return rc;
    }
    if (need > o->cap) {
        uint8_t *nb = realloc(o->buf, need);
        if (!nb)
            return -ENOMEM;
        o->buf = nb;
        o->cap = need;
    }
    if (!o->index)
        o->prev_time = rec->enter; /* the first block's base time: the START record's */
    if (!o->len)
        o->len = (size_t)(vt_rrec_block_begin(o->buf, o->index, o->prev_time, o->prev_seq) - o->buf);
    o->len = (size_t)(vt_rrec_encode(o->buf + o->len, rec, &o->prev_seq, &o->prev_time) - o->buf);
    o->nblock++;
    o->index++;
    return 0;
}

void vt_rrec_out_free(vt_rrec_out *o)
{
    free(o->buf);
    o->buf = NULL;
}

uint8_t *vt_rrec_block_begin(uint8_t *out, uint64_t first_index, int64_t base_time, uint64_t base_seq)
{
    out = vt_put_uvar(out, first_index);
    out = vt_put_svar(out, base_time);
    return vt_put_uvar(out, base_seq);
}

size_t vt_rrec_size_max(const vt_rrec *rec)
{
    return VT_UVAR_MAX * (8 + 7 * rec->nmsgs + 4 * rec->nssends + 4 * rec->ngates + 4);
}

uint8_t *vt_rrec_encode(uint8_t *out, const vt_rrec *rec, uint64_t *prev_seq, int64_t *prev_time)
{
    out = vt_put_uvar(out, rec->kind);
    out = vt_put_uvar(out, rec->seq - *prev_seq);
    *prev_seq = rec->seq;
    out = vt_put_svar(out, rec->enter - *prev_time);
    out = vt_put_uvar(out, (uint64_t)(rec->exit - rec->enter));
    *prev_time = rec->exit;
    if (rec->kind == VT_RREC_START || rec->kind == VT_RREC_END)
        return out;
    out = vt_put_uvar(out, (uint64_t)(rec->fn + 1));
    out = vt_put_uvar(out, (uint64_t)(rec->callsite + 1));
    if (rec->kind == VT_RREC_CAND)
        return out;
    if (rec->kind == VT_RREC_NBCINIT) {
        out = vt_put_uvar(out, rec->flags);
        out = vt_put_uvar(out, rec->gates[0].comm);
        out = vt_put_uvar(out, rec->gates[0].collseq);
        return vt_put_uvar(out, rec->gates[0].nmembers);
    }
    out = vt_put_uvar(out, rec->flags);
    out = vt_put_uvar(out, (uint64_t)(rec->rstar - rec->enter));
    out = vt_put_uvar(out, rec->nmsgs);
    for (size_t i = 0; i < rec->nmsgs; i++) {
        const vt_rmsg *m = &rec->msgs[i];
        out = vt_put_uvar(out, m->src);
        out = vt_put_uvar(out, m->send_seq);
        out = vt_put_svar(out, m->S - rec->enter);
        out = vt_put_uvar(out, m->bytes);
        out = vt_put_uvar(out, m->sync ? 1 : 0);
        if (m->sync) {
            out = vt_put_uvar(out, m->post_seq);
            out = vt_put_svar(out, m->P - rec->enter);
        }
    }
    out = vt_put_uvar(out, rec->nssends);
    for (size_t i = 0; i < rec->nssends; i++) {
        const vt_rssend *x = &rec->ssends[i];
        out = vt_put_uvar(out, x->dst);
        out = vt_put_uvar(out, x->send_seq);
        out = vt_put_svar(out, x->S - rec->enter);
        out = vt_put_uvar(out, x->bytes);
    }
    out = vt_put_uvar(out, rec->ngates);
    for (size_t i = 0; i < rec->ngates; i++) {
        const vt_rgate *g = &rec->gates[i];
        out = vt_put_uvar(out, g->comm);
        out = vt_put_uvar(out, g->collseq);
        out = vt_put_uvar(out, g->nmembers);
        out = vt_put_uvar(out, g->nonblocking ? 1 : 0);
    }
    return out;
}
