/* Shared declarations of the vtrace command's subcommands. */
#ifndef VT_TOOLS_H
#define VT_TOOLS_H

#include "format/reader.h"
#include "analysis/replay.h"
#include "analysis/imbalance.h"
#include "tools/args.h" /* options and usage errors; vt__fail */

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
int vt__cmd_critpath(int argc, char **argv);
void vt__usage_critpath(FILE *out);
int vt__cmd_export(int argc, char **argv);
void vt__usage_export(FILE *out);
int vt__cmd_period(int argc, char **argv);
void vt__usage_period(FILE *out);
int vt__cmd_reduce(int argc, char **argv);
void vt__usage_reduce(FILE *out);
int vt__cmd_clusters(int argc, char **argv);
void vt__usage_clusters(FILE *out);
int vt__cmd_report(int argc, char **argv);
void vt__usage_report(FILE *out);
int vt__cmd_patterns(int argc, char **argv);
void vt__usage_patterns(FILE *out);
int vt__cmd_compensate(int argc, char **argv);
void vt__usage_compensate(FILE *out);
int vt__cmd_config_vars(int argc, char **argv);
void vt__usage_config_vars(FILE *out);
int vt__cmd_synth(int argc, char **argv);
void vt__usage_synth(FILE *out);

/* Candidates (vt_replay_candidates) and scenario lists, shared by the subcommands. */
typedef struct vt__cand {
    uint32_t rank;
    uint64_t seq;
    int64_t dur;
    char fn[64];
} vt__cand;
typedef struct vt__cands {
    vt__cand *v;
    size_t n, cap;
    int oom;
} vt__cands;
void vt__cand_collect(void *arg, uint32_t rank, uint64_t seq, int64_t dur, const char *fname, int64_t callsite);
typedef struct vt__scenarios {
    vt_scenario *v;
    size_t n;
} vt__scenarios;
/* TEXT "balance" is the load-imbalance scenario (analysis/imbalance.h), made from the
 * trace by vt__scenarios_expand. */
#define VT__BALANCE "balance"
int vt__scenario_add(vt__scenarios *l, const char *text, char *err, size_t errlen);
/* Makes each "balance" scenario of L from T; 1 when there was one (ST filled), 0 none,
 * -1 with ERR. */
int vt__scenarios_expand(vt__scenarios *l, const vt_trace *t, const vt_model_params *p, vt_imbalance_stats *st,
                         vt_error *err);
/* One scenario a line, '#' comments, an empty line the baseline; "-" is stdin. */
int vt__scenario_read_file(const char *path, vt__scenarios *l, char *err, size_t errlen);
/* COUNT random scenarios over the candidates; the same seed gives the same scenarios for
 * every trace of a run (full or reduced: the same candidates in the same order). */
int vt__scenario_random(const vt__cands *cs, uint32_t count, uint32_t seed, vt__scenarios *l, char *err,
                        size_t errlen);
void vt__scenarios_free(vt__scenarios *l);
/* Options adding to a vt__scenarios (vt__opt_call): -s TEXT (a usage error "scenario
 * WHY"), -f FILE read at once (an error). */
int vt__opt_scenario(void *list, const char *text, char *msg, size_t len);
int vt__opt_scenario_file(void *list, const char *path, char *msg, size_t len);

/* The model's parameters for a replay of T (directory DIR): its configuration's, with
 * THRESHOLD (--threshold, or NULL) as the candidate threshold. VT_ARGS_GO, or the exit
 * status after saying why (a usage error of USAGE for a bad threshold). */
int vt__model_params(const vt_trace *t, const char *dir, const char *threshold, void (*usage)(FILE *),
                     vt_model_params *p);

/* The start of a replaying command: opens DIR (*T: the caller closes it, also after a
 * failure), shows the replays' progress on PR unless QUIET, and sets the model's
 * parameters (vt__model_params). VT_ARGS_GO, or the exit status after saying why. */
struct vt__progress;
int vt__replay_open(const char *dir, const char *threshold, int quiet, void (*usage)(FILE *), vt_trace **t,
                    struct vt__progress *pr, vt_model_params *p);

/* Before a replay of a full trace, when ENABLED (--clock-repair): matches its messages
 * (*M, for the caller to free), finds receives that end before their send started and
 * installs the repair (clockfix.h) on T, reporting on stderr. *FIX (NULL when nothing
 * was repaired) must outlive T's use; free it after closing T. 0, or -1 with err. */
struct vt_clockfix;
int vt__clock_repair(vt_trace *t, int enabled, vt_matches **m, struct vt_clockfix **fix, vt_error *err);
/* After a replay: the receives that broke the clock condition (without --clock-repair),
 * and where the replay of an incomplete trace stopped. */
void vt__clock_warn(const vt_replay_result *res, const struct vt_clockfix *fix);
/* On standard error, when the trace is incomplete: what happened and that the answers
 * cover its readable part only. */
/* OUT made ready for a new trace (VTRACE_OVERWRITE); 0, or -1 with a message. */
int vt__make_room(const char *out);
void vt__note_incomplete(const vt_trace *t);


/* --debug-dir DIR, repeatable (debugdir.c): where the call sites' binaries and their
 * debug files are looked for when they moved (analysis/symbols.h), before
 * VTRACE_DEBUG_PATH. Every command that names call sites takes it. */
int vt__opt_debug_dir(void *dest, const char *val, char *msg, size_t len);
#define VT__OPT_DEBUG_DIR                                                                                   \
    {                                                                                                       \
        NULL, "--debug-dir", VT_OPT_CALL, .what = "a directory", .flags = VT_OPT_EQ | VT_OPT_NEEDS,        \
        .call = vt__opt_debug_dir                                                                           \
    }
#define VT__USAGE_DEBUG_DIR                                                                                 \
    "  --debug-dir DIR      where moved binaries or their debug files are (DIR/NAME,\n"                    \
    "                       DIR/.build-id/xx/yyyy.debug); repeatable; also VTRACE_DEBUG_PATH\n"

/* JSON helpers (json.c). */
void vt__json_str(FILE *out, const char *s); /* quoted and escaped */
/* Writes the separator and "key": of an object member; *first tracks the first member. */
void vt__json_key(FILE *out, int *first, const char *key);
/* Text token: whitespace, backslash and control bytes escaped as \xHH, "" when empty. */
void vt__text_token(FILE *out, const char *s);


#endif
