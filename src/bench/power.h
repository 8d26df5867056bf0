/* power: the energy of each node while a point runs, measured by the node's lowest rank from RAPL
 * (powercap), hwmon or a Raspberry Pi 5's PMIC (vcgencmd), never estimated; the idle power before the
 * first point; /power and the per-repetition energy_j, power_short and UTC times of each point.
 * The run has one power context (the benches reach it by these calls, not through their own types). */
#ifndef WB_POWER_H
#define WB_POWER_H

struct wb_results;
struct wb_result_energy;

/* --power: what to read on each node. */
enum wb_power_mode { WB_POWER_AUTO, WB_POWER_RAPL, WB_POWER_HWMON, WB_POWER_PI5, WB_POWER_NONE };

/* The --power words in wb_power_mode order, NULL terminated. */
extern const char *const wb_power_mode_names[];

/* Collective, before the result file opens: each node's leader finds its source (mode AUTO: the first
 * of rapl, hwmon, pi5 found). A forced source missing on any node gives WB_EUSAGE with one line, agreed
 * on every rank; an unreadable counter is one warning and that node is unmeasured. idle_s is the idle
 * window wb_power_start measures. 0 or an error. */
int wb_power_open(int mode, double idle_s);

/* Collective: measure idle power (every rank sleeps idle_s when any node has a source), write /power,
 * start the sampling thread (no MPI in it). 0 or an error, agreed. A no-op without wb_power_open. */
int wb_power_start(struct wb_results *res);

/* Local: stop the sampler and forget the context. Safe to call twice. */
void wb_power_close(void);

/* Which series a repetition belongs to: the point itself, or its paired baseline. */
enum wb_power_series { WB_POWER_MAIN, WB_POWER_BASELINE };

/* Local, cheap (reads a counter or the sampler's running sum, and the wall clock): the start and end
 * of the repetition being run in series which. A no-op when power is not open. */
void wb_power_rep_begin(int which);
void wb_power_rep_end(int which);

/* Local: keep the repetition just run (a recorded one); an unkept one is overwritten by the next. */
void wb_power_rep_keep(int which);

/* Collective: hand the kept repetitions to the point's writer, gathered on rank 0, and forget them:
 * per repetition and rank the energy in J (NaN unmeasured) and whether it was too short for power,
 * and each repetition's UTC start and end (rank 0's clock). With baseline not NULL (--paired-baseline,
 * the same on every rank) the baseline series too. The writer stores them with
 * wb_results_write_energy (GROUP/energy_j ..., GROUP/baseline/energy_j ...); free them with
 * wb_result_energy_free. Nothing is present when power is not open. 0 or an error, agreed. */
int wb_power_point_take(struct wb_result_energy *main_series, struct wb_result_energy *baseline);

#endif
