/* Scenarios: which candidate events a what-if question shortens, and by how much
 * (vtrace-whatif(1)). */
#include "vt_config.h"
#include "analysis/replay.h"
#include "analysis/symbols.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vt_site_key(const vt_trace *t, uint32_t rank, int64_t cs, char *buf, size_t len, const char **sym)
{
    const vt_callsite *c = vt_trace_callsite(t, rank, cs);
    *sym = NULL;
    if (!c) {
        snprintf(buf, len, "?");
        return;
    }
    const char *base = strrchr(c->module, '/');
    base = base ? base + 1 : c->module;
    snprintf(buf, len, "%s+0x%" PRIx64, base, c->offset);
    *sym = c->symbol;
}

/* A source file as a selector names it: the whole path the debug information gives,
 * or its trailing components ("halo.c", "src/halo.c"). */
static int file_matches(const char *file, const char *name, size_t n)
{
    size_t len = strlen(file);
    if (len < n || strncmp(file + len - n, name, n))
        return 0;
    return len == n || file[len - n - 1] == '/';
}

int vt_site_matches(vt_site_view *v, const vt_trace *t, uint32_t rank, int64_t cs, const char *name)
{
    if (!v->have_key) {
        vt_site_key(t, rank, cs, v->key, sizeof v->key, &v->sym);
        v->have_key = 1;
    }
    if (!strcmp(v->key, name) || (v->sym && *v->sym && !strcmp(v->sym, name)))
        return 1;
    if (!v->have_loc) {
        v->loc_ok = vt_symbols_resolve(t, rank, cs, &v->loc);
        v->have_loc = 1;
    }
    if (!v->loc_ok)
        return 0;
    if (v->loc.function[0] && !strcmp(v->loc.function, name))
        return 1;
    /* FILE:LINE or FILE */
    const char *colon = strrchr(name, ':');
    char *end = NULL;
    long line = colon ? strtol(colon + 1, &end, 10) : 0;
    if (colon && end != colon + 1 && !*end && line > 0)
        return line == v->loc.line && file_matches(v->loc.file, name, (size_t)(colon - name));
    return file_matches(v->loc.file, name, strlen(name));
}

/* ------------------------------------------------------------------ scenarios */

static int parse_shortening(const char *s, vt_shorten *it)
{
    if (!strcmp(s, "elim")) {
        it->how = VT_SHORT_ELIM;
        return 0;
    }
    if (s[0] != '-')
        return -1;
    char *end;
    double v = strtod(s + 1, &end);
    if (end == s + 1 || v < 0)
        return -1;
    if (!strcmp(end, "%")) {
        if (v > 100)
            return -1;
        it->how = VT_SHORT_PPM;
        it->value = (int64_t)(v * 10000.0 + 0.5);
        return 0;
    }
    static const struct { const char *u; double ns; } units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(end, units[i].u)) {
            it->how = VT_SHORT_NS;
            it->value = (int64_t)(v * units[i].ns + 0.5);
            return 0;
        }
    }
    return -1;
}

static int parse_selector(const char *s, vt_shorten *it)
{
    it->rank = -1;
    const char *slash = strchr(s, '/');
    if (slash && (!strncmp(slash + 1, "fn:", 3) || !strncmp(slash + 1, "site:", 5))) {
        char *end;
        long r = strtol(s, &end, 10);
        if (end != slash || r < 0)
            return -1;
        it->rank = r;
        s = slash + 1;
    }
    if (!strcmp(s, "all")) {
        it->sel = VT_SEL_ALL;
        return 0;
    }
    if (!strncmp(s, "rank:", 5)) {
        char *end;
        long r = strtol(s + 5, &end, 10);
        if (*end || end == s + 5 || r < 0)
            return -1;
        it->sel = VT_SEL_RANK;
        it->rank = r;
        return 0;
    }
    if (!strncmp(s, "fn:", 3) || !strncmp(s, "site:", 5)) {
        it->sel = s[0] == 'f' ? VT_SEL_FUNC : VT_SEL_SITE;
        const char *name = strchr(s, ':') + 1;
        if (!*name)
            return -1;
        it->name = name;
        return 0;
    }
    char *end;
    unsigned long long r = strtoull(s, &end, 10);
    if (end == s || *end != ':')
        return -1;
    char *end2;
    unsigned long long q = strtoull(end + 1, &end2, 10);
    if (end2 == end + 1 || *end2)
        return -1;
    it->sel = VT_SEL_EVENT;
    it->rank = (int64_t)r;
    it->seq = q;
    return 0;
}

int vt_scenario_parse(const char *text, vt_scenario *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->text = strdup(text);
    char *copy = strdup(text);
    if (!out->text || !copy) {
        free(copy);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char *save = NULL;
    for (char *tok = strtok_r(copy, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strrchr(tok, '=');
        vt_shorten it;
        memset(&it, 0, sizeof it);
        if (!eq) {
            snprintf(err, errlen, "'%s': expected SELECTOR=SHORTENING, e.g. 1:17=elim or fn:MPI_Recv=-50%%", tok);
            goto fail;
        }
        *eq = '\0';
        if (parse_selector(tok, &it)) {
            snprintf(err, errlen,
                     "'%s': expected a selector RANK:SEQ, rank:R, fn:NAME, site:NAME, R/fn:NAME, R/site:NAME or all",
                     tok);
            goto fail;
        }
        if (parse_shortening(eq + 1, &it)) {
            snprintf(err, errlen, "'%s': expected a shortening: elim, -N%% (0 to 100) or -N with ns, us, ms or s",
                     eq + 1);
            goto fail;
        }
        /* room for 4, then doubling: the capacity is implicit in nitems */
        size_t ni = out->nitems;
        if (ni == 0 || (ni >= 4 && !(ni & (ni - 1)))) {
            vt_shorten *n = realloc(out->items, (ni ? 2 * ni : 4) * sizeof *n);
            if (!n) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
            out->items = n;
        }
        out->items[out->nitems++] = it;
    }
    out->tokens = copy;   /* the items' names point into it */
    return 0;
fail:
    free(copy);
    vt_scenario_free(out);
    return -1;
}

void vt_scenario_free(vt_scenario *s)
{
    free(s->text);
    free(s->tokens);
    free(s->items);
    memset(s, 0, sizeof *s);
}

