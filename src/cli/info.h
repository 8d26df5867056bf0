/* info: `wulfbench info`, what this run can see: ranks, nodes, hosts, versions, timer. */
#ifndef WB_INFO_H
#define WB_INFO_H

struct wb_options;
struct wb_results;

/* Print what this run can see (res is NULL: info writes no file). Collective. 0 or an error. */
int wb_info_run(const struct wb_options *o, struct wb_results *res);

#endif
