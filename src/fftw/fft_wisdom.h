/* fft_wisdom: FFTW wisdom files: read one into a string, save the current wisdom atomically. Local, no MPI. */
#ifndef WB_FFT_WISDOM_H
#define WB_FFT_WISDOM_H

#include <stdint.h>

/* Read the file at path into a fresh NUL-terminated *text of *len bytes (free it). A missing or
 * unreadable file gives *text NULL and *len 0: there is no wisdom yet. 0 or WB_ENOMEM. */
int wb_fft_wisdom_read_file(const char *path, char **text, int64_t *len);

/* Write the current wisdom (wb_fft_wisdom_export) to path through path.tmp and a rename.
 * 0 or WB_EIO. */
int wb_fft_wisdom_save_file(const char *path);

#endif
