/* bench_io: `wulfbench io`, storage as IOR and fio measure it: durable sequential writes, cold reads,
 * 4 KiB random I/O with latency percentiles, metadata rates, one shared file through MPI-IO and an
 * HDF5 write, on each --dir; one row per test and folder, and the group /io. */
#ifndef WB_BENCH_IO_H
#define WB_BENCH_IO_H

struct wb_options;
struct wb_results;

/* `wulfbench io`. Collective. Bad folders (missing, not a folder, read-only, short of room, tmpfs
 * without --allow-memory) give WB_EUSAGE, agreed, before any file is made. A point whose I/O fails
 * (ENOSPC, EIO) is written as failed, its files removed, and the run goes on; a read that returns
 * other bytes fails its point and the run ends WB_EVERIFY. 0 otherwise. */
int wb_bench_io_run(const struct wb_options *o, struct wb_results *res);

#endif
