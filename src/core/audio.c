#define _POSIX_C_SOURCE 200809L
/* Large files on 32-bit boards (Raspberry Pi OS armhf) need a 64-bit off_t for fstat. */
#define _FILE_OFFSET_BITS 64

#include "core/audio.h"

#include "core/error.h"
#include "core/rng.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TAG_PCM 0x0001u
#define TAG_FLOAT 0x0003u
#define TAG_EXTENSIBLE 0xFFFEu
/* Data sizes that mean "unknown, read to the end of the file": writers that cannot seek back
 * (ffmpeg to a pipe writes 0xFFFFFFFF, others 0; SoX writes 0x7ffff000 rounded down to whole frames). */
#define SIZE_UNKNOWN_FF 0xFFFFFFFFu
#define SOX_UNKNOWN_BYTES 0x7ffff000u
#define STREAM_CHUNK_BYTES ((size_t)1 << 16)

static const double two_pi = 6.283185307179586476925286766559;

struct fmt {
    unsigned tag; /* TAG_PCM or TAG_FLOAT, after unwrapping WAVE_FORMAT_EXTENSIBLE */
    int extensible;
    unsigned channels;
    uint32_t rate_hz;
    unsigned block_align; /* bytes per frame */
    unsigned bits;        /* container bits per sample */
};

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t rd64(const unsigned char *p) { return rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

/* Sample readers: little-endian bytes to the integer (or float) value, as double. */
static inline double u8_at(const unsigned char *p) { return (double)p[0] - 128.0; }

static inline double s16_at(const unsigned char *p)
{
    int32_t v = rd16(p);
    return v >= 0x8000 ? v - 0x10000 : v;
}

static inline double s24_at(const unsigned char *p)
{
    int32_t v = (int32_t)(p[0] | (p[1] << 8) | ((uint32_t)p[2] << 16));
    return v >= 0x800000 ? v - 0x1000000 : v;
}

static inline double s32_at(const unsigned char *p)
{
    int64_t v = rd32(p);
    return (double)(v >= 0x80000000LL ? v - 0x100000000LL : v);
}

static inline double f32_at(const unsigned char *p)
{
    uint32_t u = rd32(p);
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static inline double f64_at(const unsigned char *p)
{
    uint64_t u = rd64(p);
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Average ch interleaved channels of width bytes into n mono floats, times scale. The sum is double, so
 * averaging is exact for every integer format. */
static inline void mix_frames(const unsigned char *p, size_t n, unsigned ch, unsigned width,
                              double (*at)(const unsigned char *), double scale, float *s)
{
    const size_t stride = (size_t)ch * width;
    for (size_t i = 0; i < n; i++, p += stride) {
        double acc = 0;
        for (unsigned c = 0; c < ch; c++)
            acc += at(p + (size_t)c * width);
        s[i] = (float)(acc * scale);
    }
}

/* Constant channel counts let the compiler inline the reader and unroll the common mono and stereo cases. */
static inline void mix_down(const unsigned char *p, size_t n, unsigned ch, unsigned width,
                            double (*at)(const unsigned char *), double scale, float *s)
{
    if (ch == 1)
        mix_frames(p, n, 1, width, at, scale, s);
    else if (ch == 2)
        mix_frames(p, n, 2, width, at, scale, s);
    else
        mix_frames(p, n, ch, width, at, scale, s);
}

static int is_fourcc(const unsigned char *buf, size_t len, size_t at)
{
    if (at > len || len - at < 4)
        return 0;
    for (size_t i = 0; i < 4; i++)
        if (buf[at + i] < 0x20 || buf[at + i] > 0x7E)
            return 0;
    return 1;
}

static void fourcc_str(const unsigned char *p, char s[5])
{
    for (int i = 0; i < 4; i++)
        s[i] = (p[i] >= 0x20 && p[i] <= 0x7E) ? (char)p[i] : '?';
    s[4] = '\0';
}

static void set_name(struct wb_audio *a, const char *name)
{
    const char *slash = strrchr(name, '/');
    const char *base = (slash && slash[1]) ? slash + 1 : name;
    snprintf(a->name, sizeof a->name, "%s", base);
}

static const char *format_name(unsigned tag)
{
    switch (tag) {
    case 0x0000: return "unknown";
    case 0x0001: return "PCM";
    case 0x0002: return "MS ADPCM";
    case 0x0003: return "IEEE float";
    case 0x0006: return "A-law";
    case 0x0007: return "mu-law";
    case 0x0011: return "IMA ADPCM";
    case 0x0022: return "TrueSpeech";
    case 0x0031: return "GSM 6.10";
    case 0x0040: return "G.721 ADPCM";
    case 0x0050: return "MPEG audio";
    case 0x0055: return "MP3";
    case 0x0092: return "AC-3 over S/PDIF";
    case 0x00FF: case 0x1600: case 0x1610: return "AAC";
    case 0x0160: case 0x0161: case 0x0162: case 0x0163: return "WMA";
    case 0x2000: return "AC-3";
    case 0x2001: return "DTS";
    case 0x674F: case 0x6750: case 0x6751: case 0x676F: case 0x6770: case 0x6771: return "Ogg Vorbis";
    case 0xF1AC: return "FLAC";
    default: return "not PCM or float";
    }
}

/* Names a few containers people rename to .wav by mistake; NULL if none matches. */
static const char *sniff(const unsigned char *b, size_t n)
{
    if (n >= 4 && memcmp(b, "fLaC", 4) == 0) return "FLAC";
    if (n >= 4 && memcmp(b, "OggS", 4) == 0) return "Ogg";
    if (n >= 12 && memcmp(b, "FORM", 4) == 0 && (memcmp(b + 8, "AIFF", 4) == 0 || memcmp(b + 8, "AIFC", 4) == 0))
        return "AIFF";
    if (n >= 4 && memcmp(b, "riff", 4) == 0) return "Sony Wave64";
    if (n >= 4 && memcmp(b, "caff", 4) == 0) return "Apple CAF";
    if (n >= 4 && memcmp(b, ".snd", 4) == 0) return "Sun AU";
    if (n >= 7 && memcmp(b, "NIST_1A", 7) == 0) return "NIST SPHERE";
    if (n >= 8 && memcmp(b + 4, "ftyp", 4) == 0) return "MP4/M4A";
    if (n >= 3 && memcmp(b, "ID3", 3) == 0) return "MP3";
    if (n >= 2 && b[0] == 0xFF && (b[1] & 0xE0) == 0xE0) return "MP3 or AAC";
    return NULL;
}

static int unsupported_tag(const char *name, unsigned tag, int extensible)
{
    return wb_error_set(WB_EINPUT,
                        "%s: unsupported WAV format 0x%04X (%s)%s; "
                        "convert it to PCM, e.g. sox %s -e signed -b 16 out.wav",
                        name, tag, format_name(tag), extensible ? " inside WAVE_FORMAT_EXTENSIBLE" : "", name);
}

static int parse_fmt(const unsigned char *c, uint32_t size, const char *name, struct fmt *f)
{
    static const unsigned char guid_tail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                                0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    if (size < 16)
        return wb_error_set(WB_EINPUT, "%s: fmt chunk is too short (%" PRIu32 " bytes, need at least 16)", name, size);
    unsigned tag = rd16(c);
    f->channels = rd16(c + 2);
    f->rate_hz = rd32(c + 4);
    f->block_align = rd16(c + 12);
    f->bits = rd16(c + 14);
    f->extensible = 0;
    unsigned valid_bits = 0;
    if (tag == TAG_EXTENSIBLE) {
        if (size < 40)
            return wb_error_set(WB_EINPUT,
                                "%s: WAVE_FORMAT_EXTENSIBLE fmt chunk is too short (%" PRIu32 " bytes, need 40)",
                                name, size);
        const unsigned char *g = c + 24;
        if (memcmp(g + 2, guid_tail, sizeof guid_tail) != 0)
            return wb_error_set(WB_EINPUT,
                                "%s: WAVE_FORMAT_EXTENSIBLE subformat "
                                "{%08" PRIX32 "-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}"
                                " is not PCM or IEEE float; convert it, e.g. sox %s -e signed -b 16 out.wav",
                                name, rd32(g), (unsigned)rd16(g + 4), (unsigned)rd16(g + 6), g[8], g[9], g[10], g[11],
                                g[12], g[13], g[14], g[15], name);
        tag = rd16(g);
        valid_bits = rd16(c + 18);
        f->extensible = 1;
    }
    if (tag != TAG_PCM && tag != TAG_FLOAT)
        return unsupported_tag(name, tag, f->extensible);
    f->tag = tag;
    if (f->channels == 0)
        return wb_error_set(WB_EINPUT, "%s: the fmt chunk says 0 channels", name);
    if (f->channels > WB_AUDIO_MAX_CHANNELS)
        return wb_error_set(WB_EINPUT, "%s: %u channels; at most %d are supported", name, f->channels,
                            WB_AUDIO_MAX_CHANNELS);
    if (f->rate_hz == 0)
        return wb_error_set(WB_EINPUT, "%s: the fmt chunk says a sample rate of 0 Hz", name);
    if (f->rate_hz > WB_AUDIO_MAX_RATE_HZ)
        return wb_error_set(WB_EINPUT, "%s: sample rate %" PRIu32 " Hz is above the %d Hz limit", name, f->rate_hz,
                            WB_AUDIO_MAX_RATE_HZ);
    if (tag == TAG_PCM && f->bits != 8 && f->bits != 16 && f->bits != 24 && f->bits != 32)
        return wb_error_set(WB_EINPUT,
                            "%s: unsupported PCM sample size of %u bits (supported: 8, 16, 24, 32); "
                            "convert it, e.g. sox %s -e signed -b 16 out.wav",
                            name, f->bits, name);
    if (tag == TAG_FLOAT && f->bits != 32 && f->bits != 64)
        return wb_error_set(WB_EINPUT, "%s: unsupported float sample size of %u bits (supported: 32, 64)", name,
                            f->bits);
    if (valid_bits > f->bits)
        return wb_error_set(WB_EINPUT, "%s: %u valid bits per sample do not fit the %u-bit container", name,
                            valid_bits, f->bits);
    if (f->block_align != f->channels * f->bits / 8)
        return wb_error_set(WB_EINPUT, "%s: block_align is %u but %u channels of %u bits need %u", name,
                            f->block_align, f->channels, f->bits, f->channels * f->bits / 8);
    return 0;
}

static int decode_samples(const unsigned char *p, uint64_t nbytes, const struct fmt *f, const char *name,
                          struct wb_audio *out)
{
    const uint64_t frames = nbytes / f->block_align;
    if (frames == 0) {
        if (nbytes == 0)
            return wb_error_set(WB_EINPUT, "%s: no samples (the data chunk is empty)", name);
        return wb_error_set(WB_EINPUT, "%s: the data chunk holds %" PRIu64 " bytes, less than one %u-byte frame",
                            name, nbytes, f->block_align);
    }
    int rc = wb_audio_check_nsamples(frames > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)frames, name);
    if (rc)
        return rc;
    if (frames > SIZE_MAX / sizeof(float))
        return wb_error_set(WB_ENOMEM, "%s: %" PRIu64 " samples do not fit in this machine's address space", name,
                            frames);
    const size_t n = (size_t)frames;
    float *s = malloc(n * sizeof *s);
    if (!s)
        return wb_error_set(WB_ENOMEM, "%s: out of memory for %zu samples", name, n);

    const unsigned ch = f->channels;
    const double mix = 1.0 / ch;
    if (f->tag == TAG_PCM && f->bits == 8)
        mix_down(p, n, ch, 1, u8_at, mix / 128.0, s);
    else if (f->tag == TAG_PCM && f->bits == 16)
        mix_down(p, n, ch, 2, s16_at, mix / 32768.0, s);
    else if (f->tag == TAG_PCM && f->bits == 24)
        mix_down(p, n, ch, 3, s24_at, mix / 8388608.0, s);
    else if (f->tag == TAG_PCM)
        mix_down(p, n, ch, 4, s32_at, mix / 2147483648.0, s);
    else if (f->bits == 32)
        mix_down(p, n, ch, 4, f32_at, mix, s);
    else
        mix_down(p, n, ch, 8, f64_at, mix, s);
    /* A float sum of finite samples can still overflow float, so the check is on the result. */
    for (size_t i = 0; f->tag == TAG_FLOAT && i < n; i++) {
        if (!isfinite(s[i])) {
            free(s);
            return wb_error_set(WB_EINPUT,
                                "%s: sample %zu (at %.6f s) is NaN or infinite (or beyond float range); "
                                "the float data is corrupt",
                                name, i, (double)i / f->rate_hz);
        }
    }

    out->sample_rate_hz = (int32_t)f->rate_hz;
    out->channels = (int32_t)f->channels;
    out->bits = (int32_t)f->bits;
    out->is_float = f->tag == TAG_FLOAT;
    out->nsamples = (int64_t)n;
    out->data_bytes = (int64_t)(frames * f->block_align);
    out->samples = s;
    return 0;
}

/* The RIFF/RF64 and WAVE header: 0, with *rf64 set for 64-bit sizes, or why this is not a WAV file. */
static int check_header(const unsigned char *buf, size_t len, const char *name, int *rf64)
{
    /* RF64 and BW64 are RIFF with 64-bit sizes in a ds64 chunk, for files over 4 GiB. */
    if (len >= 4 && (memcmp(buf, "RF64", 4) == 0 || memcmp(buf, "BW64", 4) == 0)) {
        *rf64 = 1;
    } else if (len >= 4 && memcmp(buf, "RIFX", 4) == 0) {
        return wb_error_set(WB_EINPUT,
                            "%s: big-endian (RIFX) WAV is not supported; "
                            "convert it, e.g. sox %s -L -e signed -b 16 out.wav",
                            name, name);
    } else if (len < 4 || memcmp(buf, "RIFF", 4) != 0) {
        const char *kind = sniff(buf, len);
        if (kind)
            return wb_error_set(WB_EINPUT, "%s: not a WAV file (it looks like %s); convert it to a PCM WAV first",
                                name, kind);
        return wb_error_set(WB_EINPUT, "%s: not a WAV file (no RIFF/WAVE header)", name);
    }
    if (len < 12)
        return wb_error_set(WB_EINPUT, "%s: too short to be a WAV file (%zu bytes)", name, len);
    if (memcmp(buf + 8, "WAVE", 4) != 0) {
        char form[5];
        fourcc_str(buf + 8, form);
        return wb_error_set(WB_EINPUT, "%s: RIFF file of type '%s', not a WAV file", name, form);
    }
    return 0;
}

int wb_audio_decode_wav(const unsigned char *buf, size_t len, const char *name, struct wb_audio *out)
{
    if (!name)
        name = "(buffer)";
    memset(out, 0, sizeof *out);
    set_name(out, name);
    if (!buf || len == 0)
        return wb_error_set(WB_EINPUT, "%s: empty file (0 bytes)", name);

    int rf64 = 0;
    int rc = check_header(buf, len, name, &rf64);
    if (rc)
        return rc;

    /* The RIFF size is ignored: streaming writers leave it 0 or 0xFFFFFFFF, and the file length is what counts. */
    struct fmt f = {0, 0, 0, 0, 0, 0};
    int have_fmt = 0, have_ds64 = 0;
    uint64_t ds64_data_bytes = 0;
    size_t p = 12;
    for (;;) {
        if (len - p < 8) {
            if (!have_fmt)
                return wb_error_set(WB_EINPUT, "%s: no fmt chunk before the end of the file (%zu bytes)", name, len);
            return wb_error_set(WB_EINPUT, "%s: no data chunk before the end of the file (%zu bytes)", name, len);
        }
        const unsigned char *id = buf + p;
        const uint32_t size = rd32(buf + p + 4);
        const size_t body = p + 8;
        const uint64_t avail = len - body;
        char idstr[5];
        fourcc_str(id, idstr);

        if (memcmp(id, "data", 4) == 0) {
            if (!have_fmt)
                return wb_error_set(WB_EINPUT, "%s: the data chunk comes before the fmt chunk", name);
            uint64_t nbytes = size;
            if (rf64 && size == SIZE_UNKNOWN_FF && have_ds64 && ds64_data_bytes != 0)
                nbytes = ds64_data_bytes;
            else if (size == 0 || size == SIZE_UNKNOWN_FF || size == SOX_UNKNOWN_BYTES / f.block_align * f.block_align)
                nbytes = avail;
            if (nbytes > avail)
                return wb_error_set(WB_EINPUT,
                                    "%s: data chunk claims %" PRIu64 " bytes but only %" PRIu64
                                    " remain; the file is truncated",
                                    name, nbytes, avail);
            return decode_samples(buf + body, nbytes, &f, name, out);
        }
        if (size > avail)
            return wb_error_set(WB_EINPUT,
                                "%s: '%s' chunk claims %" PRIu32 " bytes but only %" PRIu64
                                " remain; the file is truncated or corrupt",
                                name, idstr, size, avail);
        if (memcmp(id, "fmt ", 4) == 0) {
            if (have_fmt)
                return wb_error_set(WB_EINPUT, "%s: more than one fmt chunk", name);
            rc = parse_fmt(buf + body, size, name, &f);
            if (rc)
                return rc;
            have_fmt = 1;
        } else if (rf64 && memcmp(id, "ds64", 4) == 0) {
            if (size < 24)
                return wb_error_set(WB_EINPUT, "%s: ds64 chunk is too short (%" PRIu32 " bytes, need 24)", name, size);
            ds64_data_bytes = rd64(buf + body + 8);
            have_ds64 = 1;
        }
        p = body + size;
        /* Odd chunks are followed by a pad byte, but some writers forget it: take the reading under which
         * the next chunk id is text. */
        if ((size & 1) && p < len && (is_fourcc(buf, len, p + 1) || !is_fourcc(buf, len, p)))
            p++;
    }
}

static int read_all(FILE *fp, const char *path, int regular, uint64_t size_hint, unsigned char **buf_out,
                    size_t *len_out)
{
    size_t cap, len = 0;
    if (regular && size_hint > 0) {
        if (size_hint > SIZE_MAX)
            return wb_error_set(WB_ENOMEM, "%s: %" PRIu64 " bytes is too large to load on this machine", path,
                                size_hint);
        cap = (size_t)size_hint;
    } else {
        /* Pipes, devices and files whose size is not known up front (e.g. under /proc). */
        cap = STREAM_CHUNK_BYTES;
        regular = 0;
    }
    unsigned char *buf = malloc(cap);
    if (!buf)
        return wb_error_set(WB_ENOMEM, "%s: out of memory reading %zu bytes", path, cap);
    for (;;) {
        if (len == cap) {
            if (regular)
                break;
            if (cap > SIZE_MAX / 2) {
                free(buf);
                return wb_error_set(WB_ENOMEM, "%s: too large to load on this machine", path);
            }
            unsigned char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                return wb_error_set(WB_ENOMEM, "%s: out of memory reading %zu bytes", path, cap * 2);
            }
            buf = bigger;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len, fp);
        len += got;
        if (got == 0) {
            if (ferror(fp)) {
                int e = errno;
                free(buf);
                return wb_error_set(WB_EINPUT, "%s: read error: %s", path, strerror(e));
            }
            break;
        }
    }
    *buf_out = buf;
    *len_out = len;
    return 0;
}

/* CLOCK_MONOTONIC in seconds: audio stays free of the MPI clock, so the fuzz build links it alone. */
static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int wb_audio_load_quiet(const char *path, unsigned char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    /* Only regular files: opening a FIFO would take its one writer's bytes from the reader that
     * reports them (and open without O_NONBLOCK would wait for a writer). */
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    size_t size = 0, got = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX)
        size = (size_t)st.st_size;
    unsigned char *b = size ? malloc(size) : NULL;
    while (b && got < size) {
        ssize_t n = read(fd, b + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!b || got != size) {
        free(b);
        return -1;
    }
    *buf = b;
    *len = size;
    return 0;
}

int wb_audio_read_wav(const char *path, struct wb_audio *out)
{
    double io_s;
    return wb_audio_read_wav_timed(path, out, &io_s);
}

int wb_audio_read_wav_timed(const char *path, struct wb_audio *out, double *io_s)
{
    double t0 = mono_s();
    *io_s = 0;
    memset(out, 0, sizeof *out);
    if (!path || !*path)
        return wb_error_set(WB_EINPUT, "(empty path): no file name given");
    set_name(out, path);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        if (errno == EISDIR)
            return wb_error_set(WB_EINPUT, "%s: is a directory, not a WAV file", path);
        return wb_error_set(WB_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0) {
        int e = errno;
        fclose(fp);
        return wb_error_set(WB_EINPUT, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        fclose(fp);
        return wb_error_set(WB_EINPUT, "%s: is a directory, not a WAV file", path);
    }
    unsigned char *buf = NULL;
    size_t len = 0;
    int rc = read_all(fp, path, S_ISREG(st.st_mode), st.st_size > 0 ? (uint64_t)st.st_size : 0, &buf, &len);
    fclose(fp);
    *io_s = mono_s() - t0;
    if (rc)
        return rc;
    rc = wb_audio_decode_wav(buf, len, path, out);
    free(buf);
    return rc;
}

int wb_audio_check_nsamples(int64_t nsamples, const char *name)
{
    if (!name)
        name = "(input)";
    if (nsamples < 1)
        return wb_error_set(WB_EINPUT, "%s: no samples", name);
    if (nsamples > WB_AUDIO_MAX_SAMPLES)
        return wb_error_set(WB_EINPUT, "%s: %" PRId64 " samples per channel, more than the limit of %" PRId64
                            "; use a shorter file", name, nsamples, WB_AUDIO_MAX_SAMPLES);
    return 0;
}

static const struct {
    int32_t freq_hz; /* integers, so the phase can be tracked exactly in integer steps */
    double amplitude;
} synth_tones[WB_AUDIO_SYNTH_NTONES] = {{440, 0.40}, {1000, 0.25}, {3150, 0.15}, {6300, 0.10}};

int wb_audio_synth(struct wb_audio *out, double seconds, int32_t rate_hz, uint64_t seed, int index)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "synth-%d", index);
    if (!(seconds > 0) || !isfinite(seconds))
        return wb_error_set(WB_EUSAGE, "synthetic audio: the duration must be a positive number of seconds, not %g",
                            seconds);
    /* Lower rates would alias the 6300 Hz tone or put it at Nyquist, where no tone check could find it. */
    if (rate_hz < WB_AUDIO_SYNTH_MIN_RATE_HZ || rate_hz > WB_AUDIO_MAX_RATE_HZ)
        return wb_error_set(WB_EUSAGE,
                            "synthetic audio: sample rate %" PRId32 " Hz is outside %d..%d Hz "
                            "(its highest tone is %" PRId32 " Hz)",
                            rate_hz, WB_AUDIO_SYNTH_MIN_RATE_HZ, WB_AUDIO_MAX_RATE_HZ,
                            synth_tones[WB_AUDIO_SYNTH_NTONES - 1].freq_hz);
    const double want = floor(seconds * rate_hz + 0.5);
    if (want < 1 || want > (double)WB_AUDIO_MAX_SAMPLES)
        return wb_error_set(WB_EUSAGE,
                            "synthetic audio: %g s at %" PRId32 " Hz is %.0f samples; allowed are 1..%" PRId64,
                            seconds, rate_hz, want, WB_AUDIO_MAX_SAMPLES);
    const int64_t n = (int64_t)want;
    if ((uint64_t)n > SIZE_MAX / sizeof(float))
        return wb_error_set(WB_ENOMEM,
                            "synthetic audio: %" PRId64 " samples do not fit in this machine's address space", n);
    float *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return wb_error_set(WB_ENOMEM, "synthetic audio: out of memory for %" PRId64 " samples", n);

    /* Mixing the index through its own hash keeps neighbouring indices and seeds unrelated. */
    uint64_t state = wb_rng_mix(seed ^ wb_rng_mix((uint64_t)(int64_t)index + 0x632BE59BD9B4E019u));
    double phase[WB_AUDIO_SYNTH_NTONES];
    int32_t pos[WB_AUDIO_SYNTH_NTONES]; /* (freq * i) mod rate: the exact position within the cycle */
    for (int k = 0; k < WB_AUDIO_SYNTH_NTONES; k++) {
        phase[k] = two_pi * wb_rng_unit(&state);
        pos[k] = 0;
    }
    const double step = two_pi / rate_hz;
    for (int64_t i = 0; i < n; i++) {
        double x = WB_AUDIO_SYNTH_NOISE_AMPLITUDE * (2.0 * wb_rng_unit(&state) - 1.0);
        for (int k = 0; k < WB_AUDIO_SYNTH_NTONES; k++) {
            x += synth_tones[k].amplitude * sin(step * pos[k] + phase[k]);
            pos[k] += synth_tones[k].freq_hz;
            if (pos[k] >= rate_hz)
                pos[k] -= rate_hz;
        }
        s[i] = (float)x;
    }
    out->sample_rate_hz = rate_hz;
    out->channels = 1;
    out->bits = 32;
    out->is_float = 1;
    out->nsamples = n;
    out->data_bytes = n * (int64_t)sizeof(float);
    out->samples = s;
    return 0;
}

int wb_audio_synth_tones(double *freqs_hz, double *amplitudes, int max)
{
    int n = max < WB_AUDIO_SYNTH_NTONES ? max : WB_AUDIO_SYNTH_NTONES;
    for (int k = 0; k < n; k++) {
        if (freqs_hz)
            freqs_hz[k] = synth_tones[k].freq_hz;
        if (amplitudes)
            amplitudes[k] = synth_tones[k].amplitude;
    }
    return n < 0 ? 0 : n;
}

void wb_audio_free(struct wb_audio *a)
{
    if (!a)
        return;
    free(a->samples);
    a->samples = NULL;
}
