/* VTRACE_* parsing: typed values, accepted forms, messages naming the variable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "util/settings.h"
#include "vt_config.h"

static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; e && *e; e += 2)
        if (!strcmp(e[0], name))
            return e[1];
    return NULL;
}

static void sizes(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_int_equal(vt_parse_size("32M", &v), 0);
    assert_int_equal(v, 32u << 20);
    assert_int_equal(vt_parse_size("512k", &v), 0);
    assert_int_equal(v, 512u << 10);
    assert_int_equal(vt_parse_size("1G", &v), 0);
    assert_int_equal(v, 1u << 30);
    assert_int_equal(vt_parse_size("1.5 MiB", &v), 0);
    assert_int_equal(v, 3u << 19);
    assert_int_equal(vt_parse_size("4096", &v), 0);
    assert_int_equal(v, 4096);
    v = 7;
    assert_int_equal(vt_parse_size("abc", &v), -1);
    assert_int_equal(vt_parse_size("-1M", &v), -1);
    assert_int_equal(vt_parse_size("12Q", &v), -1);
    assert_int_equal(vt_parse_size("", &v), -1);
    assert_int_equal(v, 7);
}

static void durations(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(vt_parse_duration("500us", &v), 0);
    assert_int_equal(v, 500000);
    assert_int_equal(vt_parse_duration("2ms", &v), 0);
    assert_int_equal(v, 2000000);
    assert_int_equal(vt_parse_duration("1s", &v), 0);
    assert_int_equal(v, 1000000000);
    assert_int_equal(vt_parse_duration("250ns", &v), 0);
    assert_int_equal(v, 250);
    assert_int_equal(vt_parse_duration("0.5ms", &v), 0);
    assert_int_equal(v, 500000);
    assert_int_equal(vt_parse_duration("5", &v), -1);     /* a unit is required */
    assert_int_equal(vt_parse_duration("5 parsecs", &v), -1);
    assert_int_equal(vt_parse_duration("ms", &v), -1);
}

static void modes(void **state)
{
    (void)state;
    enum vt_mode m;
    assert_int_equal(vt_parse_mode("off", &m), 0);
    assert_int_equal(m, VT_MODE_OFF);
    assert_int_equal(vt_parse_mode("FULL", &m), 0);
    assert_int_equal(m, VT_MODE_FULL);
    assert_int_equal(vt_parse_mode("reduced", &m), 0);
    assert_int_equal(m, VT_MODE_REDUCED);
    assert_int_equal(vt_parse_mode("both", &m), 0);
    assert_int_equal(m, VT_MODE_BOTH);
    assert_int_equal(vt_parse_mode("fast", &m), -1);
}

static void defaults(void **state)
{
    (void)state;
    static const char *const env[] = {NULL};
    fake_env = env;
    vt_config c;
    char err[256];
    assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), 0);
    assert_int_equal(c.mode, VT_MODE_FULL);
    assert_int_equal(c.buffer, 32u << 20);
    assert_int_equal(c.threshold_ns, 1000000);
    assert_string_equal(c.dir, "");
    assert_int_equal(c.candidates_all, 1);
    assert_int_equal(c.model_L, -1);
    assert_int_equal(c.model_trdv, VT_DEFAULT_TRDV);   /* the MPI's eager limit (configure.ac) */
    assert_int_equal(VT_DEFAULT_TRDV, VT_MPI_IS_OPENMPI ? 4041 : 8256);
}

static void model_settings(void **state)
{
    (void)state;
    static const char *const env[] = {"VTRACE_MODEL_L", "2us", "VTRACE_MODEL_G", "0.25ns", "VTRACE_MODEL_TRDV",
                                      "64k", "VTRACE_CANDIDATES", "bursts", NULL};
    fake_env = env;
    vt_config c;
    char err[256];
    assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), 0);
    assert_int_equal(c.model_L, 2000);
    assert_int_equal(c.model_G_ps, 250);
    assert_int_equal(c.model_trdv, 65536);
    assert_int_equal(c.candidates_all, 0);
    int64_t ps;
    assert_int_equal(vt_parse_per_byte("100ps", &ps), 0);
    assert_int_equal(ps, 100);
    assert_int_equal(vt_parse_per_byte("1", &ps), -1);
    static const char *const bad[] = {"VTRACE_CANDIDATES", "some", NULL};
    fake_env = bad;
    assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), -1);
    assert_non_null(strstr(err, "VTRACE_CANDIDATES"));
}

static void load_and_errors(void **state)
{
    (void)state;
    static const char *const good[] = {"VTRACE_MODE", "off", "VTRACE_BUFFER", "1M", "VTRACE_THRESHOLD",
                                       "2ms", "VTRACE_DIR", "/tmp/x", "VTRACE_COMPRESS", "3", NULL};
    fake_env = good;
    vt_config c;
    char err[256] = "";
    assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), 0);
    assert_int_equal(c.mode, VT_MODE_OFF);
    assert_int_equal(c.buffer, 1u << 20);
    assert_int_equal(c.threshold_ns, 2000000);
    assert_int_equal(c.compress, 3);
    assert_string_equal(c.dir, "/tmp/x");
    char text[512];
    vt_config_format(&c, text, sizeof text);
    assert_non_null(strstr(text, "VTRACE_THRESHOLD=2000000ns"));

    static const struct { const char *var, *val; } bad[] = {
        {"VTRACE_MODE", "fast"}, {"VTRACE_BUFFER", "abc"}, {"VTRACE_BUFFER", "1k"},
        {"VTRACE_BUFFER", "4G"}, {"VTRACE_THRESHOLD", "soon"}, {"VTRACE_COMPRESS", "99"},
        {"VTRACE_UCX_INLINE", "2"}, {"VTRACE_UCX_INLINE", "yes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *env[] = {bad[i].var, bad[i].val, NULL};
        fake_env = env;
        err[0] = '\0';
        assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), -1);
        assert_non_null(strstr(err, bad[i].var));
        assert_non_null(strstr(err, bad[i].val));
        assert_non_null(strstr(err, "expected"));
    }
}

/* Every name vt_config_load asks for, in order (fake_getenv's table answers). */
static const char *asked[64];
static size_t nasked;

static const char *recording_getenv(const char *name)
{
    if (nasked < sizeof asked / sizeof asked[0])
        asked[nasked++] = name;
    return fake_getenv(name);
}

static void edit_distances(void **state)
{
    (void)state;
    assert_int_equal(vt_edit_distance("", ""), 0);
    assert_int_equal(vt_edit_distance("", "abc"), 3);
    assert_int_equal(vt_edit_distance("abc", ""), 3);
    assert_int_equal(vt_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(vt_edit_distance("VTRACE_BUFER", "VTRACE_BUFFER"), 1);
    assert_int_equal(vt_edit_distance("VTRACE_MODEL_TRVD", "VTRACE_MODEL_TRDV"), 2);
    assert_int_equal(vt_edit_distance("VTRACE_MODE", "VTRACE_MODE"), 0);
    assert_int_equal(vt_edit_distance("vtrace_mode", "VTRACE_MODE"), 0);
}

static void nearest_names(void **state)
{
    (void)state;
    static const struct { const char *typo, *want; } cases[] = {
        {"VTRACE_BUFER", "VTRACE_BUFFER"},        {"VTRACE_BUFFERS", "VTRACE_BUFFER"},
        {"VTRACE_MOD", "VTRACE_MODE"},            {"VTRACE_MDOE", "VTRACE_MODE"},
        {"VTRACE_THRESHOLDS", "VTRACE_THRESHOLD"}, {"VTRACE_TRESHOLD", "VTRACE_THRESHOLD"},
        {"VTRACE_DIRECTORY", "VTRACE_DIR"},       {"VTRACE_MODEL_TRVD", "VTRACE_MODEL_TRDV"},
        {"VTRACE_PERIOD_WINDWO", "VTRACE_PERIOD_WINDOW"}, {"VTRACE_PERIODICAL", "VTRACE_PERIODIC"},
        {"VTRACE_COMPRES", "VTRACE_COMPRESS"},    {"VTRACE_TEST_FAIL_AFTR", "VTRACE_TEST_FAIL_AFTER"},
        {"VTRACE_candidates", "VTRACE_CANDIDATES"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_false(vt_setting_known(cases[i].typo));
        const char *got = vt_setting_nearest(cases[i].typo);
        assert_non_null(got);
        assert_string_equal(got, cases[i].want);
    }
    /* names of vtrace's scripts and module file are known, never offered */
    assert_true(vt_setting_known("VTRACE_ROOT"));
    assert_true(vt_setting_known("VTRACE_CONFIGURE_FLAGS"));
    assert_true(vt_setting_known("VTRACE_TEST_RT_BROKEN"));
    assert_string_not_equal(vt_setting_nearest("VTRACE_ROOTS"), "VTRACE_ROOT");
    int setting = -1;
    for (size_t i = 0; vt_setting_at(i, &setting); i++) {
        const char *name = vt_setting_at(i, NULL);
        assert_true(vt_setting_known(name));
        if (setting)
            assert_string_equal(vt_setting_nearest(name), name);
        else
            assert_string_not_equal(vt_setting_nearest(name), name);
    }
}

struct seen_unknown {
    int n;
    char names[4][64], nearest[4][64];
};

static void collect(const char *name, const char *nearest, void *arg)
{
    struct seen_unknown *u = arg;
    if (u->n < 4) {
        snprintf(u->names[u->n], sizeof u->names[0], "%s", name);
        snprintf(u->nearest[u->n], sizeof u->nearest[0], "%s", nearest);
    }
    u->n++;
}

static void unknown_variables(void **state)
{
    (void)state;
    char *env[] = {"PATH=/bin", "VTRACE_BUFER=1M", "VTRACE_MODE=off", "VTRACE_ROOT=/opt/vtrace",
                   "VTRACE_TEST_RT_BROKEN=noR3", "MY_VTRACE_X=1", "VTRACE_THRESHOLDS=2ms", "VTRACE_DIR",
                   "VTRACE_=", NULL};
    struct seen_unknown u = {0};
    assert_int_equal(vt_config_unknown(env, collect, &u), 3);
    assert_string_equal(u.names[0], "VTRACE_BUFER");
    assert_string_equal(u.nearest[0], "VTRACE_BUFFER");
    assert_string_equal(u.names[1], "VTRACE_THRESHOLDS");
    assert_string_equal(u.nearest[1], "VTRACE_THRESHOLD");
    assert_string_equal(u.names[2], "VTRACE_");
    char *clean[] = {"VTRACE_MODE=both", "VTRACE_BUFFER=", "HOME=/", NULL};
    assert_int_equal(vt_config_unknown(clean, collect, NULL), 0);
    assert_int_equal(vt_config_unknown(NULL, collect, NULL), 0);
}

/* The settings vt_config_load reads are the table's settings (no more, no fewer); set
 * but empty, each is an error naming it. */
static void empty_values(void **state)
{
    (void)state;
    static const char *const none[] = {NULL};
    fake_env = none;
    vt_config c;
    char err[256];
    nasked = 0;
    assert_int_equal(vt_config_load(&c, recording_getenv, err, sizeof err), 0);
    assert_true(nasked > 10);
    for (size_t i = 0; i < nasked; i++) {
        int setting = 0;
        int found = 0;
        for (size_t k = 0; vt_setting_at(k, &setting); k++)
            if (!strcmp(vt_setting_at(k, NULL), asked[i]))
                found = setting;
        assert_true(found);
    }
    int setting;
    for (size_t k = 0; vt_setting_at(k, &setting); k++) {
        const char *name = vt_setting_at(k, NULL);
        int read = 0;
        for (size_t i = 0; i < nasked; i++)
            read |= !strcmp(asked[i], name);
        assert_int_equal(read, setting);
        if (!setting)
            continue;
        const char *env[] = {name, "", NULL};
        fake_env = env;
        err[0] = '\0';
        assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), -1);
        assert_non_null(strstr(err, name));
        assert_non_null(strstr(err, "=''"));
        assert_non_null(strstr(err, "expected"));
    }
    /* the test hook's forms */
    static const char *const hooks[] = {"noR3", "nofold", "stale-d", "stop:5"};
    for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
        const char *env[] = {"VTRACE_TEST_RT_BROKEN", hooks[i], NULL};
        fake_env = env;
        assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), 0);
    }
    static const char *const bad_hooks[] = {"stop:", "stop:x", "noR4"};
    for (size_t i = 0; i < sizeof bad_hooks / sizeof bad_hooks[0]; i++) {
        const char *env[] = {"VTRACE_TEST_RT_BROKEN", bad_hooks[i], NULL};
        fake_env = env;
        assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), -1);
        assert_non_null(strstr(err, "VTRACE_TEST_RT_BROKEN"));
    }
}

/* The table's documented defaults are the defaults: each setting set to its table default
 * loads the configuration the empty environment gives (vtrace config-vars prints them).
 * The others say what happens unset: no value stands for it. */
static void table_defaults(void **state)
{
    (void)state;
    static const char *const not_values[] = {"VTRACE_DIR", "VTRACE_FILTER", "VTRACE_MODEL_L", "VTRACE_PERIODIC",
                                             "VTRACE_TEST_FAIL_AFTER", "VTRACE_TEST_RT_BROKEN",
                                             "VTRACE_TEST_CLOCK_SKEW", "VTRACE_TEST_STORE"};
    static const char *const none[] = {NULL};
    fake_env = none;
    vt_config base, c;
    char err[256];
    assert_int_equal(vt_config_load(&base, fake_getenv, err, sizeof err), 0);
    const vt_setting_info *s;
    size_t checked = 0;
    for (size_t i = 0; (s = vt_setting_info_at(i)); i++) {
        assert_non_null(s->type);
        assert_true(strlen(s->what) > 10);
        if (!s->is_setting)
            continue;
        assert_true(strlen(s->accepted) > 2);
        int skip = 0;
        for (size_t k = 0; k < sizeof not_values / sizeof not_values[0]; k++)
            skip |= !strcmp(not_values[k], s->name);
        if (skip)
            continue;
        const char *env[] = {s->name, s->def, NULL};
        fake_env = env;
        if (vt_config_load(&c, fake_getenv, err, sizeof err))
            fail_msg("%s=%s (its documented default): %s", s->name, s->def, err);
        if (memcmp(&c, &base, sizeof c))
            fail_msg("%s=%s (its documented default) loads another configuration than unset", s->name, s->def);
        checked++;
    }
    assert_true(checked >= 10);
    /* an invalid value's message is the table's accepted forms */
    const char *env[] = {"VTRACE_MODEL_M", "9", NULL};
    fake_env = env;
    assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), -1);
    assert_string_equal(err, "VTRACE_MODEL_M='9' is invalid: expected an integer from 1 to 7");
}

/* VTRACE_CLOCK: auto (unset), tsc, monotonic, letters without case; anything else is the
 * settings' error */
static void clock_choice(void **state)
{
    (void)state;
    static const struct { const char *v; int want; } ok[] = {
        {"auto", VT_CLOCK_AUTO}, {"tsc", VT_CLOCK_TSC}, {"monotonic", VT_CLOCK_MONOTONIC}, {"TSC", VT_CLOCK_TSC}};
    vt_config c;
    char err[256];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const char *env[] = {"VTRACE_CLOCK", ok[i].v, NULL};
        fake_env = env;
        assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), 0);
        assert_int_equal(c.clock, ok[i].want);
    }
    const char *env[] = {"VTRACE_CLOCK", "rdtsc", NULL};
    fake_env = env;
    assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), -1);
    assert_string_equal(err, "VTRACE_CLOCK='rdtsc' is invalid: expected one of auto, tsc, monotonic");
    /* the configuration text: the setting always; the clock used and the check once known */
    const char *none[] = {NULL};
    fake_env = none;
    assert_int_equal(vt_config_load(&c, fake_getenv, err, sizeof err), 0);
    char text[4096];
    vt_config_format(&c, text, sizeof text);
    assert_non_null(strstr(text, "\nVTRACE_CLOCK=auto\n"));
    assert_null(strstr(text, "VTRACE_CLOCK_USED"));
    c.clock_ranks = 4;
    c.clock_tsc_ranks = 2;
    vt_config_format(&c, text, sizeof text);
    assert_non_null(strstr(text, "\nVTRACE_CLOCK_USED=tsc on 2 of 4 ranks, monotonic on the others\n"));
    assert_null(strstr(text, "VTRACE_CLOCK_CHECK"));
    c.clock_tsc_ranks = 4;
    c.clock_drift_ns = 2500000;
    c.clock_drift_bound_ns = 100500;
    c.clock_drift_rank = 3;
    vt_config_format(&c, text, sizeof text);
    assert_non_null(strstr(text, "\nVTRACE_CLOCK_USED=tsc\nVTRACE_CLOCK_CHECK=drifted: the TSC 2500000ns from "
                                 "CLOCK_MONOTONIC at MPI_Finalize on rank 3 (bound 100500ns)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes), cmocka_unit_test(durations), cmocka_unit_test(modes),
        cmocka_unit_test(defaults), cmocka_unit_test(load_and_errors), cmocka_unit_test(model_settings),
        cmocka_unit_test(edit_distances), cmocka_unit_test(nearest_names), cmocka_unit_test(unknown_variables), cmocka_unit_test(table_defaults),
        cmocka_unit_test(empty_values), cmocka_unit_test(clock_choice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
