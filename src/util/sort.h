/* qsort for arrays that may be empty: qsort's base must not be NULL even for no
 * elements (UBSan reports it), and an empty array often is NULL. */
#ifndef VT_SORT_H
#define VT_SORT_H

#include <stdlib.h>

static inline void vt_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

#endif
