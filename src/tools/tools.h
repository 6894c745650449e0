/* Shared declarations of the vtrace command's subcommands. */
#ifndef VT_TOOLS_H
#define VT_TOOLS_H

#include "reader.h"

#include <stdio.h>

/* Exit codes. */
#define VT_EXIT_OK 0
#define VT_EXIT_ERROR 1 /* bad input (trace errors, I/O) */
#define VT_EXIT_USAGE 2 /* unknown option or subcommand */

/* A subcommand: run(argc, argv) with argv[0] the subcommand name. */
typedef struct vt__command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
    void (*usage)(FILE *out);
} vt__command;

int vt__cmd_info(int argc, char **argv);
void vt__usage_info(FILE *out);
int vt__cmd_dump(int argc, char **argv);
void vt__usage_dump(FILE *out);
int vt__cmd_whatif(int argc, char **argv);
void vt__usage_whatif(FILE *out);
int vt__cmd_domino(int argc, char **argv);
void vt__usage_domino(FILE *out);

/* "vtrace: MESSAGE" on stderr; returns VT_EXIT_ERROR. */
int vt__fail(const vt_error *err);
/* Prints the usage of a subcommand on stderr with a reason; returns VT_EXIT_USAGE. */
int vt__usage_error(void (*usage)(FILE *), const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parses a non-negative decimal integer; 0 on success. */
int vt__parse_u32(const char *s, uint32_t *out);

/* JSON helpers (json.c). */
void vt__json_str(FILE *out, const char *s); /* quoted and escaped */
/* Writes the separator and "key": of an object member; *first tracks the first member. */
void vt__json_key(FILE *out, int *first, const char *key);
/* Text token: whitespace, backslash and control bytes escaped as \xHH, "" when empty. */
void vt__text_token(FILE *out, const char *s);

/* "symbol@module+0xOFFSET", "module+0xOFFSET" or "0xADDRESS" (module basename). */
void vt__format_site(char *buf, size_t len, const vt_callsite *cs);

#endif
