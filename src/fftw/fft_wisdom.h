/* fft_wisdom: FFTW wisdom files (read one into a string, save the current wisdom atomically; local) and
 * the one way rank 0's wisdom reaches every rank, for fft and dfft alike (collective). */
#ifndef WB_FFT_WISDOM_H
#define WB_FFT_WISDOM_H

#include <stdint.h>

/* Read the FFTW wisdom in the file at path into a fresh NUL-terminated *text of *len bytes (free
 * it). A missing or unreadable file gives *text NULL and *len 0: there is no wisdom yet. A file that
 * wb_fft_wisdom_save_file wrote on another architecture or FFTW build is refused, naming both. 0,
 * WB_EUSAGE or WB_ENOMEM. */
int wb_fft_wisdom_read_file(const char *path, char **text, int64_t *len);

/* Collective: give every rank rank 0's wisdom, so a cluster plans once. From path (rank 0 reads it;
 * a missing file is no wisdom yet) or, path NULL, rank 0's current wisdom. 0, WB_EUSAGE when the
 * file is not wisdom of this FFTW ("--wisdom PATH: ...; delete it to plan afresh"), or another
 * error, agreed on every rank. */
int wb_fft_wisdom_share(const char *path);

/* Write the current wisdom (wb_fft_wisdom_export) to path through path.tmp and a rename.
 * 0 or WB_EIO. */
int wb_fft_wisdom_save_file(const char *path);

#endif
