/* The stored reduced trace (stored.h): the full trace, copied, marked in vtrace.defs. */
#include "vt_config.h"
#include "format/stored.h"
#include "format/blockio.h"
#include "util/codec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/fs.h>   /* FICLONE */
#endif
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

uint64_t vt_file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int say(char *why, size_t cap, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int say(char *why, size_t cap, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return rc;
}

static int read_file(const char *path, uint8_t **out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    int rc = fstat(fd, &st) ? -errno : 0;
    uint8_t *p = rc ? NULL : malloc(st.st_size ? (size_t)st.st_size : 1);
    size_t got = 0;
    if (!rc && !p)
        rc = -ENOMEM;
    while (!rc && got < (size_t)st.st_size) {
        ssize_t n = read(fd, p + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            rc = n < 0 ? -errno : -EIO;
        else
            got += (size_t)n;
    }
    close(fd);
    if (rc) {
        free(p);
        return rc;
    }
    *out = p;
    *len = got;
    return 0;
}

/* Where GLOBAL's flags are in its payload (the last field a 1.5 writer puts there). */
static int global_flags_at(const uint8_t *p, size_t len, size_t *at)
{
    const uint8_t *q = p, *end = p + len;
    uint64_t n, v;
    int64_t s;
    for (int i = 0; i < 3; i++) {   /* vtrace version, MPI library, configuration */
        if (vt_get_uvar(&q, end, &n) || n > (uint64_t)(end - q))
            return -1;
        q += n;
    }
    if (vt_get_uvar(&q, end, &n) || n > len)
        return -1;
    for (uint64_t r = 0; r < n; r++) {
        for (int i = 0; i < 4; i++)
            if (vt_get_svar(&q, end, &s))
                return -1;
        if (vt_get_uvar(&q, end, &v) || vt_get_uvar(&q, end, &v) || v > (uint64_t)(end - q))
            return -1;
        q += v;
    }
    *at = (size_t)(q - p);
    return vt_get_uvar(&q, end, &v);
}

/* The configuration text of a GLOBAL payload: its third string. 0, or -1. */
static int config_of(const uint8_t *payload, size_t len, const uint8_t **text, size_t *tlen, size_t *at)
{
    const uint8_t *q = payload, *end = payload + len;
    uint64_t n;
    for (int i = 0; i < 3; i++) {   /* vtrace version, MPI library, configuration */
        if (i == 2)
            *at = (size_t)(q - payload);
        if (vt_get_uvar(&q, end, &n) || n > (uint64_t)(end - q))
            return -1;
        *text = q;
        *tlen = (size_t)n;
        q += n;
    }
    return 0;
}

/* A vtrace.defs read whole into *F (*LEN bytes), and its GLOBAL block's payload
 * decoded into *RAW (*PLEN bytes, room for 10 more; *LEVEL: its zstd level, 0 raw).
 * 0, or -1 (*F and *RAW to free either way). */
static int load_global(uint8_t **f, size_t *len, vt_block_header *h, uint8_t **raw, size_t *plen,
                       int *level)
{
    const size_t hs = VT_FILE_HEADER_SIZE + VT_BLOCK_HEADER_SIZE;
    *raw = NULL;
    if (*len < hs || memcmp(*f, VT_MAGIC_DEFS, VT_MAGIC_LEN))
        return -1;
    vt_block_header_decode(*f + VT_FILE_HEADER_SIZE, h);
    if (h->magic != VT_BLOCK_MAGIC || h->type != VT_BLOCK_GLOBAL || h->stored_len > *len - hs)
        return -1;
    const uint8_t *payload = *f + hs;
    *plen = h->stored_len;
    *level = 0;
    if (h->codec == VT_CODEC_ZSTD) {
#ifdef HAVE_ZSTD
        *raw = malloc((size_t)h->raw_len + 10);
        if (!*raw || ZSTD_decompress(*raw, h->raw_len, payload, *plen) != h->raw_len)
            return -1;
        *plen = h->raw_len;
        *level = 3;   /* (vtrace synth's) */
        return 0;
#else
        return -1;
#endif
    }
    if (h->codec != VT_CODEC_RAW || !(*raw = malloc(*plen + 10)))
        return -1;
    memcpy(*raw, payload, *plen);
    return 0;
}

/* IN's vtrace.defs with VT_GLOBAL_STORED set and OUT's configuration text (the model
 * parameters of the reduction that wrote OUT: a threshold or L of its own), written to
 * FD: its GLOBAL block again, every other byte as it was. */
static int write_defs(const char *in, const char *out, int fd, char *why, size_t cap)
{
    char path[4400], opath[4400];
    snprintf(path, sizeof path, "%s/vtrace.defs", in);
    snprintf(opath, sizeof opath, "%s/vtrace.defs", out);
    uint8_t *f = NULL, *raw = NULL, *of = NULL, *oraw = NULL;
    size_t len = 0, olen = 0, plen = 0, oplen = 0, at, cat, oat, tl, otl;
    const uint8_t *text, *otext;
    vt_block_header h, oh;
    int level, olevel;
    int rc = read_file(path, &f, &len);
    if (rc)
        return say(why, cap, rc, "%s: cannot read: %s", path, strerror(-rc));
    if ((rc = read_file(opath, &of, &olen))) {
        free(f);
        return say(why, cap, rc, "%s: cannot read: %s", opath, strerror(-rc));
    }
    if (load_global(&f, &len, &h, &raw, &plen, &level) || config_of(raw, plen, &text, &tl, &cat))
        goto bad;
    if (load_global(&of, &olen, &oh, &oraw, &oplen, &olevel) || config_of(oraw, oplen, &otext, &otl, &oat)) {
        snprintf(path, sizeof path, "%s", opath);
        goto bad;
    }
    /* the configuration string replaced by OUT's */
    uint8_t *np = malloc(plen + otl + 2 * VT_UVAR_MAX + 10);
    if (!np)
        goto bad;
    memcpy(np, raw, cat);
    uint8_t *w = vt_put_uvar(np + cat, otl);
    memcpy(w, otext, otl);
    w += otl;
    size_t ctail = plen - (size_t)(text + tl - raw);
    memcpy(w, text + tl, ctail);
    plen = (size_t)(w - np) + ctail;
    free(raw);
    raw = np;
    const size_t hs = VT_FILE_HEADER_SIZE + VT_BLOCK_HEADER_SIZE;
    uint64_t flags;
    const uint8_t *q;
    if (global_flags_at(raw, plen, &at))
        goto bad;
    q = raw + at;
    if (vt_get_uvar(&q, raw + plen, &flags))
        goto bad;
    /* the flags again, VT_GLOBAL_STORED added (one byte as before: flags < 16) */
    size_t old = (size_t)(q - (raw + at)), tail = plen - at - old;
    uint8_t nf[10], *e = vt_put_uvar(nf, flags | VT_GLOBAL_STORED);
    memmove(raw + at + (size_t)(e - nf), raw + at + old, tail);
    memcpy(raw + at, nf, (size_t)(e - nf));
    plen = at + (size_t)(e - nf) + tail;
    rc = vt_write_all(fd, f, VT_FILE_HEADER_SIZE);
    if (!rc)
        rc = vt_block_write(fd, VT_BLOCK_GLOBAL, raw, plen, 0, level);
    if (!rc)
        rc = vt_write_all(fd, f + hs + h.stored_len, len - hs - h.stored_len);
    free(f);
    free(raw);
    free(of);
    free(oraw);
    return rc ? say(why, cap, rc, "cannot write the stored vtrace.defs: %s", strerror(-rc)) : 0;
bad:
    free(f);
    free(raw);
    free(of);
    free(oraw);
    return say(why, cap, -EINVAL, "%s: offset %u: expected a GLOBAL block that parses as format 1.5's", path,
               (unsigned)VT_FILE_HEADER_SIZE);
}

/* Test hooks (VTRACE_TEST_STORE): "kill", the process dies with the copy whole and OUT
 * not exchanged yet, as a run killed inside MPI_Finalize; "nospace", the copy's writes
 * fail as on a full disk; "readwrite", the file system refuses to clone or copy in the
 * kernel, and every file is copied with read and write. */
static int test_hook(const char *what)
{
    const char *k = getenv("VTRACE_TEST_STORE");
    return k && !strcmp(k, what);
}

/* How files are copied: the first of these the file system takes, for every file after
 * (a refusal costs one call per store, not one per rank file). */
enum { COPY_CLONE, COPY_RANGE, COPY_RW };

/* An errno that says the file system (or kernel) cannot do it, not that the copy failed. */
static int refused(int e)
{
    return e == EOPNOTSUPP || e == ENOTTY || e == EXDEV || e == EINVAL || e == ENOSYS || e == EBADF ||
           e == ETXTBSY || e == EPERM;
}

/* IN's bytes (from offset 0) into OUT, empty: cloned (copy on write, so the copies stay
 * apart), copied in the kernel, or read and written, as *HOW allows; their count added to
 * *BYTES. 0 or -errno. */
static int copy_bytes(int in, int out, int *how, uint64_t *bytes)
{
#ifdef FICLONE
    if (*how == COPY_CLONE) {
        if (ioctl(out, FICLONE, in) == 0) {
            struct stat st;
            if (fstat(out, &st))
                return -errno;
            *bytes += (uint64_t)st.st_size;
            return 0;
        }
        if (!refused(errno))
            return -errno;
        *how = COPY_RANGE;
    }
#else
    if (*how == COPY_CLONE)
        *how = COPY_RANGE;
#endif
    if (*how == COPY_RANGE) {
        /* until it returns 0 (end of IN); a refusal before any byte moved falls back */
        for (int first = 1;; first = 0) {
            ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
            if (n == 0)
                return 0;
            if (n > 0) {
                *bytes += (uint64_t)n;
                continue;
            }
            if (errno == EINTR)
                continue;
            if (!first || !refused(errno))
                return -errno;
            *how = COPY_RW;
            break;
        }
    }
    char buf[1 << 16];
    for (ssize_t n; (n = read(in, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        int rc = n < 0 ? -errno : vt_write_all(out, buf, (size_t)n);
        if (rc)
            return rc;
        *bytes += (uint64_t)n;
    }
    return 0;
}

static int copy_file(const char *from, const char *to, int *how, uint64_t *bytes)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int rc = out < 0 ? -errno : test_hook("nospace") ? -ENOSPC : copy_bytes(in, out, how, bytes);
    if (out >= 0 && close(out) && !rc)
        rc = -errno;
    close(in);
    return rc;
}

/* Removes DIR and the files in it (it holds no directory). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        char path[4700];
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}


int vt_trace_store(const char *in, const char *out_arg, uint64_t *bytes_out, char *why, size_t cap)
{
    uint64_t bytes = 0, other = 0; /* the trace's files', and config.txt's */
    char path[4500], from[4500], tmp[4100], old[4100], out[4000];
    /* (OUT/ names OUT: the copy goes beside it, not inside) */
    snprintf(out, sizeof out, "%s", out_arg);
    for (size_t n = strlen(out); n > 1 && out[n - 1] == '/'; n--)
        out[n - 1] = '\0';
    snprintf(path, sizeof path, "%s/vtrace.defs", in);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint8_t fh[VT_FILE_HEADER_SIZE];
    int rc = fd < 0 ? -errno : read(fd, fh, sizeof fh) == (ssize_t)sizeof fh ? 0 : -EINVAL;
    if (fd >= 0)
        close(fd);
    if (rc)
        return say(why, cap, rc, "%s: cannot read its file header: %s", path, strerror(-rc));
    uint32_t nranks = vt_get_u32(fh + 12);
    int how = test_hook("readwrite") ? COPY_RW : COPY_CLONE;
    snprintf(tmp, sizeof tmp, "%.4000s.stored-%ld", out, (long)getpid());
    snprintf(old, sizeof old, "%.4000s.reduced-%ld", out, (long)getpid());
    remove_dir(tmp);
    if (mkdir(tmp, 0755))
        return say(why, cap, -errno, "%s: cannot create the directory: %s", tmp, strerror(errno));
    for (uint32_t r = 0; r < nranks; r++) {
        snprintf(from, sizeof from, "%s/rank-%06u.vte", in, r);
        snprintf(path, sizeof path, "%s/rank-%06u.vte", tmp, r);
        rc = copy_file(from, path, &how, &bytes);
        if (rc == -ENOENT)   /* (a rank of a cut run that wrote nothing stays so) */
            rc = 0;
        if (rc) {
            say(why, cap, rc, "cannot copy %s to %s: %s", from, path, strerror(-rc));
            goto fail;
        }
    }
    snprintf(from, sizeof from, "%s/config.txt", out);
    snprintf(path, sizeof path, "%s/config.txt", tmp);
    if ((rc = copy_file(from, path, &how, &other)) == -ENOENT)
        rc = 0;
    if (rc) {
        say(why, cap, rc, "cannot copy %s to %s: %s", from, path, strerror(-rc));
        goto fail;
    }
    snprintf(path, sizeof path, "%s/vtrace.defs", tmp);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = say(why, cap, -errno, "%s: cannot create: %s", path, strerror(errno));
        goto fail;
    }
    rc = write_defs(in, out, fd, why, cap);
    off_t end = rc ? 0 : lseek(fd, 0, SEEK_CUR);
    if (end < 0)
        rc = say(why, cap, -errno, "%s: cannot tell its size: %s", path, strerror(errno));
    bytes += (uint64_t)(end > 0 ? end : 0);
    if (close(fd) && !rc)
        rc = say(why, cap, -errno, "%s: cannot write: %s", path, strerror(errno));
    if (rc)
        goto fail;
    if (test_hook("kill"))
        raise(SIGKILL);
    if (bytes_out)
        *bytes_out = bytes;
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, out, RENAME_EXCHANGE) == 0) {
        remove_dir(tmp);   /* (OUT's old trace now) */
        return 0;
    }
    /* no exchange here (EINVAL: the file system; ENOENT: no OUT yet) */
    if (rename(out, old) && errno != ENOENT) {
        rc = say(why, cap, -errno, "cannot move %s aside to %s: %s", out, old, strerror(errno));
        goto fail;
    }
    if (rename(tmp, out)) {
        rc = say(why, cap, -errno, "cannot move %s to %s: %s", tmp, out, strerror(errno));
        rename(old, out);
        goto fail;
    }
    remove_dir(old);
    return 0;
fail:
    remove_dir(tmp);
    return rc;
}
