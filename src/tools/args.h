/* The options and arguments of a subcommand: one table per command (vt__opt), one call
 * (vt__args_parse) that reads argv in order, stores each value where its entry says,
 * prints the usage for -h/--help and the usage errors of every command. */
#ifndef VT_ARGS_H
#define VT_ARGS_H

#include "format/reader.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* "vtrace: MESSAGE" on stderr; returns VT_EXIT_ERROR. */
int vt__fail(const vt_error *err);
/* The subcommand running (vtrace.c sets it), NULL before one is found. */
extern const char *vt__command_name;
/* "vtrace: REASON" and "see 'vtrace CMD --help'" (of vt__command_name, or of vtrace) on
 * stderr, not the usage text itself (USAGE is kept for the callers); returns
 * VT_EXIT_USAGE. */
int vt__usage_error(void (*usage)(FILE *), const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parses a non-negative decimal integer; 0 on success. */
int vt__parse_u32(const char *s, uint32_t *out);

typedef enum vt__opt_kind {
    VT_OPT_FLAG,     /* int: set to 1 */
    VT_OPT_STRING,   /* const char *: the value (the last one given) */
    VT_OPT_COUNT,    /* uint32_t: a decimal count within [lo, hi] (hi 0: no upper bound) */
    VT_OPT_POSITIVE, /* uint32_t: a count from 1 */
    VT_OPT_INT,      /* int: an integer within [lo, hi] (vt_parse_int) */
    VT_OPT_NUMBER,   /* double: a finite number within [lo, hi] */
    VT_OPT_LIST,     /* vt__strlist: every value, in order (a repeatable option) */
    VT_OPT_CALL,     /* call(dest, value, ...) */
} vt__opt_kind;

/* flags */
#define VT_OPT_EQ 1u            /* --name=VALUE too */
#define VT_OPT_NEEDS 2u         /* the error is "NAME needs WHAT", also for a missing value */
#define VT_OPT_BELOW 4u         /* VT_OPT_NUMBER: hi itself is out of range */
#define VT_OPT_MISSING_EMPTY 8u /* without a value: the bad-value error, naming '' */
#define VT_OPT_MISSING_SELF 16u /* without a value: the bad-value error, naming the option */
/* Without any of the last three, an option lacking its value is an unknown option. */

/* VT_OPT_CALL: returns 0 when VAL is taken; -1 when it is bad (the option's error, as
 * for the other kinds); VT_EXIT_USAGE for a usage error and VT_EXIT_ERROR for another
 * error, both explained in MSG. */
typedef int (*vt__opt_call)(void *dest, const char *val, char *msg, size_t len);

typedef struct vt__opt {
    const char *sname;   /* "-k", or NULL */
    const char *lname;   /* "--top": the name in the errors */
    vt__opt_kind kind;
    void *dest;          /* where the value goes (see the kinds) */
    const char *what;    /* "NAME takes WHAT, not 'VALUE'"; NULL: from the kind and range */
    double lo, hi;       /* range of the counts and numbers */
    unsigned flags;      /* VT_OPT_EQ ... */
    vt__opt_call call;   /* VT_OPT_CALL */
} vt__opt;

/* VT_OPT_LIST: allocated by the parser (free v). */
typedef struct vt__strlist {
    const char **v;
    size_t n;
} vt__strlist;

typedef struct vt__args {
    void (*usage)(FILE *out); /* printed by --help (stdout) and after an error (stderr) */
    const vt__opt *opts;      /* ends with an entry without names */
    const char **pos[3];      /* where the arguments that are no options go, in order */
    const char *missing;      /* the error when there is none; NULL: the command checks */
    const char *extra;        /* the error for one too many, with " ('ARG')"; NULL: "one
                               * trace directory only" */
    int extra_plain;          /* ... without " ('ARG')" */
    const char *prefix;       /* before the text of every error ("dump: "); NULL: none */
    int dashdash;             /* "--" ends the options */
} vt__args;

#define VT_ARGS_GO (-1)
/* Reads argv[1..argc-1]: VT_ARGS_GO when the command goes on, else its exit status
 * (VT_EXIT_OK after --help; VT_EXIT_USAGE after a usage error, explained on stderr). */
int vt__args_parse(const vt__args *a, int argc, char **argv);

#endif
