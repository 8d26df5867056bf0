/* pmic: a Raspberry Pi 5's PMIC rails, as `vcgencmd pmic_read_adc` prints them, and the board's power
 * from them. There are two ways to ask the firmware:
 * - its mailbox, /dev/vcio, with the ioctl vcgencmd itself makes: microseconds a reading;
 * - running vcgencmd: a process start a reading, milliseconds, which at 10 Hz takes a share of a core
 *   from the run it measures.
 * wb_pmic_open takes the mailbox wherever it answers with rails, and where vcgencmd is on PATH as
 * well, only if both give the same rails and about the same power. Local; one caller at a time. */
#ifndef WB_PMIC_H
#define WB_PMIC_H

#include <stddef.h>

enum wb_pmic_way { WB_PMIC_NONE, WB_PMIC_MAILBOX, WB_PMIC_VCGENCMD };
/* "", "mailbox", "vcgencmd": what /power/reader records. */
extern const char *const wb_pmic_way_names[];

/* Finds the way to read the rails (the mailbox first), or WB_PMIC_NONE when neither gives any. */
enum wb_pmic_way wb_pmic_open(void);

/* The way wb_pmic_open found (WB_PMIC_NONE before it and after wb_pmic_close). */
enum wb_pmic_way wb_pmic_way(void);

/* The board's power in W read now, the way wb_pmic_open found; NAN when the reading fails. */
double wb_pmic_read_w(void);

void wb_pmic_close(void);

/* CPU seconds of every vcgencmd started so far (user and system, from wait4). */
double wb_pmic_child_cpu_s(void);

/* The sum over rails of "<RAIL>_V volt(N)=X V" times "<RAIL>_A current(N)=X A" in text (changed);
 * rails with only one of the two (EXT5V_V, BATT_V) count nothing. NAN when no rail pairs up; *pairs
 * (if not NULL) is how many did. */
double wb_pmic_text_w(char *text, int *pairs);

#endif
