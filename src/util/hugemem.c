#include "util/hugemem.h"

#include <stdlib.h>
#include <sys/mman.h>

void *vt_huge_alloc(size_t len)
{
    if (len < VT_HUGE_PAGE)
        return malloc(len);
    void *p;
    if (posix_memalign(&p, VT_HUGE_PAGE, len))
        return NULL;
#ifdef MADV_HUGEPAGE
    /* advice only: EINVAL without THP in the kernel changes nothing */
    (void)madvise(p, len & ~(VT_HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}
