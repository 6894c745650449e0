/* Room for NEED elements of SIZE bytes in the array *V of capacity *CAP (in elements),
 * doubling it: 0, or -1 (no memory, or the size overflows; *V and *CAP stay). */
#ifndef VT_GROW_H
#define VT_GROW_H

#include <stdint.h>
#include <stdlib.h>

static inline int vt_grow(void **v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (size && n > SIZE_MAX / size)
        return -1;
    void *nv = realloc(*v, n * size);
    if (!nv)
        return -1;
    *v = nv;
    *cap = n;
    return 0;
}

#endif
