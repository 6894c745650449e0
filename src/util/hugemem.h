/* Large buffers written once through from start to end (the trace's record buffer):
 * backed by 2 MiB transparent huge pages where the kernel allows it (issue 18). */
#ifndef VT_UTIL_HUGEMEM_H
#define VT_UTIL_HUGEMEM_H

#include <stddef.h>

#define VT_HUGE_PAGE ((size_t)2 << 20)

/* LEN bytes for free() and realloc(), or NULL. From VT_HUGE_PAGE on, aligned to it and
 * marked MADV_HUGEPAGE: on a virtual machine a 4 KiB page's first write costs about
 * 3.7 us (7 ns an 8-byte record streamed through the buffer), a 2 MiB page's per byte
 * a tenth of that. Where transparent huge pages are off ("never") nothing changes. */
void *vt_huge_alloc(size_t len);

#endif
