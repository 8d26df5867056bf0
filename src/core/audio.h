/* audio: WAV decoding to mono float samples, synthetic test signals, input listing. No MPI: every call is local. */
#ifndef WB_AUDIO_H
#define WB_AUDIO_H

#include <stddef.h>
#include <stdint.h>

struct wb_audio {
    char name[256];          /* basename of the file, or "synth-<i>" */
    int32_t sample_rate_hz;
    int32_t channels;        /* channels in the source before mix-down */
    int32_t bits;            /* bits per sample in the source container (8,16,24,32,64) */
    int32_t is_float;        /* 1 for IEEE float data */
    int64_t nsamples;        /* mono samples after mix-down */
    int64_t data_bytes;      /* bytes of sample data decoded from the source (whole frames) */
    float *samples;          /* mono, integers scaled to [-1, 1], floats as stored; malloc'd; owner frees with wb_audio_free */
};

/* Largest number of mono samples one file may hold (memory guard), and the bound check used by the decoder. */
#define WB_AUDIO_MAX_SAMPLES ((int64_t)1 << 31)
/* Largest channel count and sample rate (Hz) the decoder accepts; larger values mean a corrupt header. */
#define WB_AUDIO_MAX_CHANNELS 64
#define WB_AUDIO_MAX_RATE_HZ 1000000
/* Number of tones in every synthetic signal, peak amplitude of its uniform white noise, and its lowest rate (Hz). */
#define WB_AUDIO_SYNTH_NTONES 4
#define WB_AUDIO_SYNTH_NOISE_AMPLITUDE 0.01
#define WB_AUDIO_SYNTH_MIN_RATE_HZ 16000

/* Decode a RIFF/WAVE (or RF64) file into mono float samples. 0, WB_EINPUT with one line "<path>: <reason>", or WB_ENOMEM. */
int wb_audio_read_wav(const char *path, struct wb_audio *out);
/* The same, with the seconds spent getting the file's bytes (open, stat, read) into *io_s, the rest
 * being the decode: what a faster disk can and cannot shorten. */
int wb_audio_read_wav_timed(const char *path, struct wb_audio *out, double *io_s);

/* The whole of a regular, non-empty file in *buf (malloc'd; the caller frees it) and its length, leaving the
 * error state alone, so that a thread may read one file while the caller decodes another: 0, or -1 for any
 * failure (read it again with wb_audio_read_wav_timed for the message). */
int wb_audio_load_quiet(const char *path, unsigned char **buf, size_t *len);

/* Decode len bytes from memory (same rules); name is used in messages and, as a basename, in out->name. */
int wb_audio_decode_wav(const unsigned char *buf, size_t len, const char *name, struct wb_audio *out);

/* 0 if nsamples (mono samples) is within 1..WB_AUDIO_MAX_SAMPLES, else WB_EINPUT with a message naming name. */
int wb_audio_check_nsamples(int64_t nsamples, const char *name);

/* Synthetic audio of seconds (s) at rate_hz (Hz): the known tones plus noise from seed and index; same arguments, same bits. */
int wb_audio_synth(struct wb_audio *out, double seconds, int32_t rate_hz, uint64_t seed, int index);

/* The tone frequencies (Hz) and peak amplitudes (full scale 1) in every synthetic signal; fills and returns at most max. */
int wb_audio_synth_tones(double *freqs_hz, double *amplitudes, int max);

/* Paths (files, or folders' *.wav any case, byte-sorted, not recursive) to a file list; WB_EINPUT if missing or no WAV. */
int wb_audio_list_inputs(const char *const *paths, int npaths, char ***files_out, int *nfiles_out);

/* Free a list from wb_audio_list_inputs (nfiles paths) and set *files to NULL. */
void wb_audio_free_list(char ***files, int nfiles);

/* Free the samples and set the pointer to NULL (the other fields stay, for reporting). */
void wb_audio_free(struct wb_audio *a);

#endif
