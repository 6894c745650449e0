/* What a trace buffer's first write costs (issue 18, doc/piggyback.md "The record
 * buffer's pages"): 8-byte stores streamed through 32 MiB of fresh anonymous memory, as
 * records fill the buffer's first block, in 4 KiB pages, advised MADV_HUGEPAGE, and
 * through memory already written once. Prints ns a store for each, median of 5 rounds.
 *   cc -O2 -o first-touch maint/bench/first-touch.c && ./first-touch */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

enum { ROUNDS = 5 };
static const size_t cap = (size_t)32 << 20;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ns per 8-byte store; HUGE: advised MADV_HUGEPAGE; WARM: every page written first */
static double one(int huge, int warm)
{
    char *b = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
#ifdef MADV_HUGEPAGE
    if (huge)
        madvise(b, cap, MADV_HUGEPAGE);
#endif
    if (warm)
        for (size_t i = 0; i < cap; i += 4096)
            b[i] = 1;
    double t0 = now();
    for (size_t i = 0; i < cap; i += 8)
        *(volatile size_t *)(b + i) = i;
    double t = (now() - t0) / (double)(cap / 8);
    munmap(b, cap);
    return t;
}

int main(void)
{
    static const char *const name[] = {"4 KiB pages, first write", "MADV_HUGEPAGE, first write",
                                       "already written once"};
    for (int k = 0; k < 3; k++) {
        double s[ROUNDS];
        for (int r = 0; r < ROUNDS; r++)
            s[r] = one(k == 1, k == 2);
        qsort(s, ROUNDS, sizeof s[0], cmp);
        printf("%-28s %.2f ns a store (min %.2f, max %.2f)\n", name[k], s[ROUNDS / 2], s[0], s[ROUNDS - 1]);
    }
    return 0;
}
