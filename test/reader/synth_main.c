/* synth DIR [--zstd LEVEL] [--per-block N] [--unmatched] [--cols] [--shared]: writes the synthetic trace. */
#include "synth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    synth_opts o = {0};
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--zstd") == 0 && i + 1 < argc)
            o.zstd_level = atoi(argv[++i]);
        else if (strcmp(argv[i], "--per-block") == 0 && i + 1 < argc)
            o.records_per_block = atoi(argv[++i]);
        else if (strcmp(argv[i], "--unmatched") == 0)
            o.unmatched = 1;
        else if (strcmp(argv[i], "--cols") == 0)
            o.cols = 1;
        else if (strcmp(argv[i], "--shared") == 0)
            o.shared = 1;
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else
            dir = NULL, i = argc;
    }
    if (!dir) {
        fprintf(stderr, "usage: synth DIR [--zstd LEVEL] [--per-block N] [--unmatched] [--cols] [--shared]\n");
        return 2;
    }
    char err[4200];
    if (synth_write(dir, &o, err, sizeof err)) {
        fprintf(stderr, "synth: %s\n", err);
        return 1;
    }
    return 0;
}
