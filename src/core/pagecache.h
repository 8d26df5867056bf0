/* pagecache: a file's pages out of the page cache before a cold read, and how many stayed. */
#ifndef WB_PAGECACHE_H
#define WB_PAGECACHE_H

/* The share of path's pages in the page cache (mincore), 0 for an empty file, 1 when unknown. Local. */
double wb_pagecache_resident(const char *path);

/* Drop path's pages: fdatasync (dirty pages are never dropped), posix_fadvise(DONTNEED), and, when
 * global is set and pages stayed, the node's whole cache (drop_caches, root only). The method that held
 * ("drop_caches" or "fadvise"), and in *resident the share still cached. Local. */
const char *wb_pagecache_drop(const char *path, int global, double *resident);

#endif
