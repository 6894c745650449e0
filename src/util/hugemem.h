/* Large buffers written once through from start to end (the trace's record buffer):
 * backed by 2 MiB transparent huge pages where the kernel allows it (issue 18). */
#ifndef VT_UTIL_HUGEMEM_H
#define VT_UTIL_HUGEMEM_H

#include <stddef.h>

#define VT_HUGE_PAGE ((size_t)2 << 20)

/* LEN bytes for free() and realloc(), or NULL. From VT_HUGE_PAGE on, aligned to it and
 * marked MADV_HUGEPAGE: on a virtual machine a 4 KiB page's first write costs about
 * 3.7 us, and 8-byte records streamed through fresh memory took 5.6-7.4 ns each in
 * 4 KiB pages, 1.8-2.2 ns in huge ones (maint/bench/first-touch.c). Where transparent
 * huge pages are off ("never") nothing changes. */
void *vt_huge_alloc(size_t len);

#endif
